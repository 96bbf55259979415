package io.pistore.engine.volume.file;

import java.io.IOException;
import java.io.SyncFailedException;
import java.nio.ByteBuffer;

/**
 * A {@link StorageFile} whose writes fail while {@link #refusingWrites} (as a full file system's
 * do: nothing written) and whose forcings fail while {@link #failingSyncs}, as
 * {@link ChannelStorageFile} reports them.
 */
final class RefusingStorageFile implements StorageFile {
    private final StorageFile f;
    volatile boolean refusingWrites;
    volatile boolean failingSyncs;

    RefusingStorageFile(StorageFile f) {
        this.f = f;
    }

    @Override
    public int read(ByteBuffer dst, long pos) throws IOException {
        return f.read(dst, pos);
    }

    @Override
    public void write(ByteBuffer src, long pos) throws IOException {
        if (refusingWrites) {
            throw new IOException("No space left on device");
        }
        f.write(src, pos);
    }

    @Override
    public void sync() throws IOException {
        if (failingSyncs) {
            throw new SyncFailedException("Input/output error");
        }
        f.sync();
    }

    @Override
    public long size() throws IOException {
        return f.size();
    }

    @Override
    public void truncate(long size) throws IOException {
        f.truncate(size);
    }

    @Override
    public ByteBuffer mapReadOnly(long pos, long len) throws IOException {
        return f.mapReadOnly(pos, len);
    }

    @Override
    public ByteBuffer mapReadWrite(long pos, long len) throws IOException {
        return f.mapReadWrite(pos, len);
    }

    @Override
    public boolean inMemory() {
        return f.inMemory();
    }

    @Override
    public void close() throws IOException {
        f.close();
    }
}
