package io.pistore.engine.volume.file;

import io.pistore.engine.volume.PrivateFiles;
import java.io.IOException;
import java.io.SyncFailedException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A {@link StorageFile} over a {@link FileChannel}: pread, pwrite, fdatasync, shared read-only
 * mappings, and shared read-write mappings on file systems that keep files in memory.
 */
final class ChannelStorageFile implements StorageFile {
    private final FileChannel ch;
    private final boolean inMemory;

    private ChannelStorageFile(FileChannel ch, Path p) {
        this.ch = ch;
        // On a disk file system (ext4, xfs) every page written back is write-protected again, so the
        // next store through a mapping faults into the file system, which costs more than the
        // positional write it saves (docs/history.md#crash-atomic-file-volumes).
        this.inMemory = FileVolume.inMemory(p);
    }

    /** Opens an existing file for reading and writing. */
    static ChannelStorageFile open(Path p) throws IOException {
        return new ChannelStorageFile(FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE), p);
    }

    /** Creates a new file, {@code 0600} ({@link PrivateFiles}); fails if it exists. */
    static ChannelStorageFile create(Path p) throws IOException {
        return new ChannelStorageFile(PrivateFiles.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE), p);
    }

    @Override
    public int read(ByteBuffer dst, long pos) throws IOException {
        return ch.read(dst, pos);
    }

    @Override
    public void write(ByteBuffer src, long pos) throws IOException {
        while (src.hasRemaining()) {
            pos += ch.write(src, pos);
        }
    }

    /**
     * Forces the file; a failure is a {@link SyncFailedException} (same message), which tells it
     * from a refused write: after it the kernel may have dropped pages it could not write.
     */
    @Override
    public void sync() throws IOException {
        try {
            ch.force(false);
        } catch (SyncFailedException e) {
            throw e;
        } catch (IOException e) {
            SyncFailedException s = new SyncFailedException(e.getMessage());
            s.initCause(e);
            throw s;
        }
    }

    @Override
    public long size() throws IOException {
        return ch.size();
    }

    @Override
    public void truncate(long size) throws IOException {
        ch.truncate(size);
    }

    @Override
    public ByteBuffer mapReadOnly(long pos, long len) throws IOException {
        return ch.map(FileChannel.MapMode.READ_ONLY, pos, len);
    }

    @Override
    public ByteBuffer mapReadWrite(long pos, long len) throws IOException {
        return inMemory ? ch.map(FileChannel.MapMode.READ_WRITE, pos, len) : null;
    }

    @Override
    public boolean inMemory() {
        return inMemory;
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
