package io.pistore.engine.volume.file;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One file of a file volume, as the volume uses it: positional reads and writes, a sync that makes
 * every write before it durable, size and truncate. The real implementation is
 * {@link ChannelStorageFile}; tests put a recording one behind a volume to build the states a
 * crash or power loss can leave (which writes since the last sync reached the disk, torn at which
 * sector).
 */
interface StorageFile extends AutoCloseable {
    /** Reads up to {@code dst.remaining()} bytes at {@code pos}; returns how many, -1 at the end. */
    int read(ByteBuffer dst, long pos) throws IOException;

    /** Writes all of {@code src} at {@code pos}, growing the file if needed. */
    void write(ByteBuffer src, long pos) throws IOException;

    /** Makes every write so far durable (fdatasync). */
    void sync() throws IOException;

    long size() throws IOException;

    void truncate(long size) throws IOException;

    /**
     * A read-only view of {@code [pos, pos + len)} that follows later writes, or null where the
     * implementation has none (the caller then reads with {@link #read}).
     */
    ByteBuffer mapReadOnly(long pos, long len) throws IOException;

    /**
     * A shared read-write view of {@code [pos, pos + len)} (a {@link java.nio.MappedByteBuffer},
     * whose {@code force} makes its changes durable), or null where the implementation has none (the
     * caller then writes with {@link #write}).
     */
    ByteBuffer mapReadWrite(long pos, long len) throws IOException;

    /**
     * Whether the file lives in memory only (tmpfs, ramfs). There a write is in the file's one copy
     * (the page cache) as soon as it returns, and a store into a shared mapping as soon as it is
     * made: it survives a crash of the process, and no {@link #sync} makes anything survive the
     * machine's (nothing reaches a disk), so a sync costs next to nothing and changes nothing. A
     * volume all of whose files are in memory writes through without forcing its journal records;
     * on a disk it lets several segments' writes gather before it forces the home files.
     */
    default boolean inMemory() {
        return false;
    }

    @Override
    void close() throws IOException;

    /** Reads exactly {@code dst.remaining()} bytes at {@code pos}. */
    default void readFully(ByteBuffer dst, long pos) throws IOException {
        while (dst.hasRemaining()) {
            int r = read(dst, pos);
            if (r < 0) {
                throw new IOException("unexpected end of file at " + pos);
            }
            pos += r;
        }
    }
}
