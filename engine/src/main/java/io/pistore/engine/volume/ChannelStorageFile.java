package io.pistore.engine.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A {@link StorageFile} over a {@link FileChannel}: pread, pwrite, fdatasync, shared read-only mappings. */
final class ChannelStorageFile implements StorageFile {
    private final FileChannel ch;

    private ChannelStorageFile(FileChannel ch) {
        this.ch = ch;
    }

    /** Opens an existing file for reading and writing. */
    static ChannelStorageFile open(Path p) throws IOException {
        return new ChannelStorageFile(FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE));
    }

    /** Creates a new file; fails if it exists. */
    static ChannelStorageFile create(Path p) throws IOException {
        return new ChannelStorageFile(FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE));
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

    @Override
    public void sync() throws IOException {
        ch.force(false);
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
        return ch.map(FileChannel.MapMode.READ_WRITE, pos, len);
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
