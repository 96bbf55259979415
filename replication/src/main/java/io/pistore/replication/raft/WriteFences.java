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
 * on a newer connection, and is refused. And the write sequence numbers
 * ({@link io.pistore.spi.WriteFence#seq}) admitted lately, the last {@link #WINDOW} below the highest:
 * a write whose number was admitted before is a copy the host sent again after its first copy
 * committed, and is not applied again (applied again after another host's write to those blocks, it
 * would undo that write). A number below the window is admitted as new, as a write without one is.
 * Changed only by the applier, in log order, whatever the apply's outcome, and restored from a
 * snapshot with the blocks, so every replica decides the same; a restart rebuilds the table by
 * passing the entries after the snapshot through {@link #admit} and {@link #admitSeq} again.
 *
 * <p>Bounded: at most {@link #MAX_STREAMS} streams, the one admitted least recently forgotten first
 * (in log order too, so on every replica the same one). A stream forgotten is unfenced: a stale copy
 * of its writes could then be applied, which takes that many other host queues writing meanwhile.
 * Layout on disk: {@code count(4)}, then {@code key(8) epoch(8)} per stream, least recent first; then,
 * where any stream carried numbers, {@code SEQ_MAGIC(4) count(4)} and {@code key(8) top(8)
 * window(WINDOW / 8)} per such stream (a table without that part has none).
 */
final class WriteFences {
    static final int MAX_STREAMS = 4096;
    static final String FILE = "fences";
    /** Sequence numbers remembered per stream below its highest: far more than a queue has in flight. */
    static final int WINDOW = 1024;
    private static final int SEQ_MAGIC = 0x53455131; // "SEQ1"

    private final int max;
    /** Access order: each admission moves its stream to the end, so the eldest is the least recent. */
    private final LinkedHashMap<Long, Stream> streams;

    /** One stream's highest epoch and, once it carried one, its window of admitted sequence numbers. */
    private static final class Stream {
        long epoch;
        /** The highest number admitted; bit {@code i} of {@link #bits}: {@code top - i} was admitted. */
        long top;
        long[] bits;

        boolean seen(long seq) {
            if (bits == null || seq > top || top - seq >= WINDOW) {
                return false;
            }
            long i = top - seq;
            return (bits[(int) (i >>> 6)] & (1L << (i & 63))) != 0;
        }

        void admit(long seq) {
            if (bits == null) {
                bits = new long[WINDOW / 64];
                top = seq;
            }
            if (seq > top) {
                shift(seq - top);
                top = seq;
            }
            long i = top - seq;
            if (i < WINDOW) {
                bits[(int) (i >>> 6)] |= 1L << (i & 63);
            }
        }

        /** Moves the window up by {@code n}: bit i becomes bit i + n. */
        private void shift(long n) {
            if (n >= WINDOW) {
                java.util.Arrays.fill(bits, 0);
                return;
            }
            int words = (int) (n >>> 6);
            int r = (int) (n & 63);
            for (int w = bits.length - 1; w >= 0; w--) {
                int from = w - words;
                long hi = from >= 0 ? bits[from] << r : 0;
                long lo = r != 0 && from - 1 >= 0 ? bits[from - 1] >>> (64 - r) : 0;
                bits[w] = hi | lo;
            }
        }
    }

    WriteFences() {
        this(MAX_STREAMS);
    }

    WriteFences(int max) {
        this.max = max;
        this.streams = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Stream> eldest) {
                return size() > WriteFences.this.max;
            }
        };
    }

    /**
     * Whether a write of stream {@code key} sent on its connection {@code epoch} may be applied (then
     * the epoch is recorded), or is older than one applied (then nothing changes but the order).
     */
    boolean admit(long key, long epoch) {
        Stream s = streams.get(key);
        if (s != null && epoch < s.epoch) {
            return false;
        }
        if (s == null) {
            s = new Stream();
            streams.put(key, s);
        }
        s.epoch = Math.max(s.epoch, epoch);
        return true;
    }

    /**
     * After {@link #admit} let a write of stream {@code key} through: whether its sequence number
     * {@code seq} is new (then it is recorded, and the write is applied), or was admitted before (a
     * copy sent again: not applied again). {@code seq} 0: none, always new.
     */
    boolean admitSeq(long key, long seq) {
        if (seq == 0) {
            return true;
        }
        Stream s = streams.get(key);
        if (s == null) {
            s = new Stream();
            streams.put(key, s);
        }
        if (s.seen(seq)) {
            return false;
        }
        s.admit(seq);
        return true;
    }

    /**
     * The highest epoch applied of stream {@code key}, or 0 when none is known. Looked up without
     * counting as a use (a lookup would move the stream in the order), so only admissions order it.
     */
    long highest(long key) {
        for (Map.Entry<Long, Stream> e : streams.entrySet()) {
            if (e.getKey() == key) {
                return e.getValue().epoch;
            }
        }
        return 0;
    }

    int size() {
        return streams.size();
    }

    byte[] encode() {
        int withSeq = 0;
        for (Stream s : streams.values()) {
            withSeq += s.bits != null ? 1 : 0;
        }
        int seqBytes = withSeq == 0 ? 0 : 8 + withSeq * (16 + WINDOW / 8);
        ByteBuffer b = ByteBuffer.allocate(4 + 16 * streams.size() + seqBytes);
        b.putInt(streams.size());
        for (Map.Entry<Long, Stream> e : streams.entrySet()) {
            b.putLong(e.getKey()).putLong(e.getValue().epoch);
        }
        if (withSeq > 0) {
            b.putInt(SEQ_MAGIC).putInt(withSeq);
            for (Map.Entry<Long, Stream> e : streams.entrySet()) {
                Stream s = e.getValue();
                if (s.bits != null) {
                    b.putLong(e.getKey()).putLong(s.top);
                    for (long w : s.bits) {
                        b.putLong(w);
                    }
                }
            }
        }
        return b.array();
    }

    /** Replaces the table with the one in {@code file} (a snapshot's), or empties it when null or absent. */
    void restore(Path file) throws IOException {
        streams.clear();
        if (file == null || !Files.exists(file)) {
            return;
        }
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
        if (b.remaining() < 4) {
            throw new IOException(file + ": a fence table of " + b.remaining() + " bytes, shorter than its count");
        }
        int n = b.getInt();
        if (n < 0 || (long) n * 16 > b.remaining()) {
            throw new IOException(file + ": a fence table says " + n + " streams but holds " + b.remaining() + " bytes");
        }
        for (int i = 0; i < n; i++) {
            Stream s = new Stream();
            long key = b.getLong();
            s.epoch = b.getLong();
            streams.put(key, s);
        }
        if (!b.hasRemaining()) {
            return;
        }
        if (b.remaining() < 8 || b.getInt() != SEQ_MAGIC) {
            throw new IOException(file + ": a fence table with " + (b.remaining() + 4) + " bytes after its streams");
        }
        int m = b.getInt();
        if (m < 0 || m > n || (long) m * (16 + WINDOW / 8) != b.remaining()) {
            throw new IOException(file + ": a fence table says " + m + " windows but holds " + b.remaining() + " bytes");
        }
        for (int i = 0; i < m; i++) {
            long key = b.getLong();
            Stream s = streams.get(key);
            if (s == null) {
                throw new IOException(file + ": a window of stream " + Long.toHexString(key) + ", which the table lacks");
            }
            s.top = b.getLong();
            s.bits = new long[WINDOW / 64];
            for (int w = 0; w < s.bits.length; w++) {
                s.bits[w] = b.getLong();
            }
        }
    }
}
