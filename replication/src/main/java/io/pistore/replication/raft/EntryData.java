package io.pistore.replication.raft;

import io.pistore.engine.volume.file.FileVolume;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * Data beside the log: a command that carries data enters the Raft log as a header only ({@code
 * code(1) length(4) crc32c(4)}, then a zero byte per KiB of data), its bytes as the entry's state
 * machine data. Ratis sends those bytes to the followers with the entry but writes only the header
 * into its log (no checksum of the data in Java, no zeros written ahead of it); each peer keeps the
 * bytes in its {@link EntryDataLog}, and the most recent ones in memory for its appenders and its
 * applier.
 *
 * <p>Durable before named: where the log is on a disk, {@link #write} completes only once the
 * record is forced, and Ratis writes an entry's header into its log only after that; so a Raft log
 * never holds an entry whose data a crash could take. In memory (tmpfs) nothing survives the
 * machine and a written record survives the process, so nothing is forced.
 */
final class EntryData implements Closeable {
    /** The header's first byte: no command's op code (those are below 32). */
    static final byte CODE = 0x40;
    static final int HEADER = 9;
    /**
     * Data bytes per byte of a header's padding. Ratis sizes its log segments by the bytes it writes,
     * and an entry's data is kept until Ratis purges the segment that holds its header: padded, a
     * segment of headers stands for at most its size times this much data (64 MiB for 64 KiB), not
     * for a count of entries whatever their size.
     */
    static final int DATA_PER_PAD_BYTE = 1024;
    /** Commands of fewer bytes stay inside the log entry: a record of their own would cost more than it saves. */
    static final int BESIDE_FROM = 512;
    /** Bytes of recent entries kept in memory. */
    private static final long RECENT_BYTES = 32L << 20;
    /** The size of an entry data file at most: what a default log segment of headers stands for. */
    private static final long FILE_BYTES_MAX = 64L << 20;
    private static final long FILE_BYTES_MIN = 1L << 20;
    /** Forces the records of logs on disks, off Ratis's appending thread (which holds its server's lock). */
    private static final int FORCERS = 4;
    private static final Executor FORCER = forcer();

    private final EntryDataLog log;
    private final boolean force;
    private final ConcurrentSkipListMap<Long, ByteString> recent = new ConcurrentSkipListMap<>();
    private long recentBytes; // under recent's own monitor

    private EntryData(EntryDataLog log, boolean force) {
        this.log = log;
        this.force = force;
    }

    /**
     * Opens the data log in {@code dir}, beside a Raft log of {@code logSegmentBytes} segments: a data
     * file holds what one segment of headers stands for (1 to 64 MiB), so that purging a segment
     * can free about one file.
     */
    static EntryData open(Path dir, long logSegmentBytes) throws IOException {
        long fileBytes = Math.max(FILE_BYTES_MIN, Math.min(FILE_BYTES_MAX, logSegmentBytes * DATA_PER_PAD_BYTE));
        EntryDataLog log = EntryDataLog.open(dir, fileBytes);
        return new EntryData(log, !FileVolume.inMemory(dir));
    }

    /**
     * At most {@code FORCERS} forcings at once, the rest queued: a forcing covers every record
     * appended before it began, so those queued behind it find little or nothing left to force.
     */
    private static Executor forcer() {
        ThreadPoolExecutor e = new ThreadPoolExecutor(FORCERS, FORCERS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "pistore-entry-data-force");
                    t.setDaemon(true);
                    return t;
                });
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /** Whether a command of these bytes goes beside the log. */
    static boolean beside(ByteString command) {
        return command.size() >= BESIDE_FROM;
    }

    /** The header that stands for {@code data} in the log. */
    static ByteString header(ByteString data) {
        ByteBuffer b = ByteBuffer.allocate(HEADER + data.size() / DATA_PER_PAD_BYTE); // the padding zeros
        b.put(CODE).putInt(data.size()).putInt(EntryDataLog.crcOf(data));
        return UnsafeByteOperations.unsafeWrap(b.rewind());
    }

    /** Whether an entry's log data is a header (its data beside the log) rather than the commands. */
    static boolean isHeader(ByteString logData) {
        return logData.size() >= HEADER && logData.byteAt(0) == CODE;
    }

    /** A one-line reason why {@code data} is not what {@code header} names, or null if it is. */
    static String mismatch(ByteString header, ByteString data) {
        ByteBuffer h = header.asReadOnlyByteBuffer();
        h.get();
        int length = h.getInt();
        int crc = h.getInt();
        if (data.size() != length) {
            return "holds " + data.size() + " bytes where its header says " + length;
        }
        int actual = EntryDataLog.crcOf(data);
        return actual == crc ? null : String.format("fails its checksum (expected %08x, actual %08x)", crc, actual);
    }

    /**
     * Keeps the data of entry {@code index} (its header {@code header}): recorded at once, the
     * returned future done once the record is durable.
     */
    CompletableFuture<?> write(long index, ByteString header, ByteString data) {
        ByteBuffer h = header.asReadOnlyByteBuffer().slice(); // from 0: a parsed header may be a view into a larger array
        if (h.getInt(1) != data.size()) {
            return CompletableFuture.failedFuture(new IOException("the data of log entry " + index + " holds "
                    + data.size() + " bytes where its header says " + h.getInt(1)));
        }
        try {
            log.append(index, data, h.getInt(5)); // checks the checksum
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        remember(index, data);
        if (!force) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> {
            try {
                log.force();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, FORCER);
    }

    /**
     * The data of entry {@code index}: from memory as it was written (checked then), else from the
     * entry data log, checked against its header.
     */
    ByteString read(long index, ByteString header) throws IOException {
        ByteString data = recent.get(index);
        if (data != null) {
            return data;
        }
        data = log.read(index);
        if (data == null) {
            throw new IOException("no data of log entry " + index + " beside the log (its oldest is "
                    + log.firstIndex() + ", its newest " + log.lastIndex() + ")");
        }
        String bad = mismatch(header, data);
        if (bad != null) {
            throw new IOException("the data of log entry " + index + " " + bad);
        }
        return data;
    }

    private void remember(long index, ByteString data) {
        synchronized (recent) {
            ByteString old = recent.put(index, data);
            recentBytes += data.size() - (old == null ? 0 : old.size());
            while (recentBytes > RECENT_BYTES) {
                Map.Entry<Long, ByteString> e = recent.pollFirstEntry();
                recentBytes -= e.getValue().size();
            }
        }
    }

    /** Drops the data of entries {@code index} and after (Ratis replaced them). */
    void truncate(long index) throws IOException {
        forget(recent.tailMap(index, true));
        log.truncate(index);
    }

    /** Removes a view of {@link #recent} and its bytes from the count. */
    private void forget(Map<Long, ByteString> gone) {
        synchronized (recent) {
            for (ByteString b : gone.values()) {
                recentBytes -= b.size();
            }
            gone.clear();
        }
    }

    /** Drops the files whose entries are all before {@code index} (purged from the Raft log). */
    void dropBefore(long index) throws IOException {
        forget(recent.headMap(index, false));
        log.dropBefore(index);
    }

    EntryDataLog log() {
        return log;
    }

    /** Whether {@link #write} forces each record (the log is on a disk, not in memory). */
    boolean forces() {
        return force;
    }

    @Override
    public void close() throws IOException {
        synchronized (recent) {
            recent.clear();
            recentBytes = 0;
        }
        log.close();
    }
}
