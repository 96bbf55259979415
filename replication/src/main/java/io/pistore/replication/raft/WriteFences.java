package io.pistore.replication.raft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per host write stream ({@link io.pistore.spi.WriteFence#key}), the highest connection epoch whose
 * write this replica applied: a write of a lower epoch is a stale copy the host has since sent again
 * on a newer connection, and is refused. Changed only by the applier, in log order, and restored
 * from a snapshot with the blocks, so every replica refuses the same writes; a restart rebuilds the
 * table by passing the entries after the snapshot through {@link #admit} again, applied or not.
 *
 * <p>Bounded: at most {@link #MAX_STREAMS} streams, the one admitted least recently forgotten first
 * (in log order too, so on every replica the same one). A stream forgotten is unfenced: a stale copy
 * of its writes could then be applied, which takes that many other host queues writing meanwhile.
 * Layout on disk: {@code count(4)}, then {@code key(8) epoch(8)} per stream, least recent first.
 */
final class WriteFences {
    static final int MAX_STREAMS = 4096;
    static final String FILE = "fences";

    private final int max;
    /** Access order: each admission moves its stream to the end, so the eldest is the least recent. */
    private final LinkedHashMap<Long, Long> highest;

    WriteFences() {
        this(MAX_STREAMS);
    }

    WriteFences(int max) {
        this.max = max;
        this.highest = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
                return size() > WriteFences.this.max;
            }
        };
    }

    /**
     * Whether a write of stream {@code key} sent on its connection {@code epoch} may be applied (then
     * the epoch is recorded), or is older than one applied (then nothing changes but the order).
     */
    boolean admit(long key, long epoch) {
        Long h = highest.get(key);
        if (h != null && epoch < h) {
            return false;
        }
        if (h == null || epoch > h) {
            highest.put(key, epoch);
        }
        return true;
    }

    /**
     * The highest epoch applied of stream {@code key}, or 0 when none is known. Looked up without
     * counting as a use (a lookup would move the stream in the order), so only admissions order it.
     */
    long highest(long key) {
        for (Map.Entry<Long, Long> e : highest.entrySet()) {
            if (e.getKey() == key) {
                return e.getValue();
            }
        }
        return 0;
    }

    int size() {
        return highest.size();
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(4 + 16 * highest.size());
        b.putInt(highest.size());
        for (Map.Entry<Long, Long> e : highest.entrySet()) {
            b.putLong(e.getKey()).putLong(e.getValue());
        }
        return b.array();
    }

    /** Replaces the table with the one in {@code file} (a snapshot's), or empties it when null or absent. */
    void restore(Path file) throws IOException {
        highest.clear();
        if (file == null || !Files.exists(file)) {
            return;
        }
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
        if (b.remaining() < 4) {
            throw new IOException(file + ": a fence table of " + b.remaining() + " bytes, shorter than its count");
        }
        int n = b.getInt();
        if (n < 0 || (long) n * 16 != b.remaining()) {
            throw new IOException(file + ": a fence table says " + n + " streams but holds " + b.remaining() + " bytes");
        }
        for (int i = 0; i < n; i++) {
            highest.put(b.getLong(), b.getLong());
        }
    }
}
