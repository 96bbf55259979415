package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * A file volume's write-ahead journal, {@code NAME.journal} (layout in docs/FORMAT.md): a header in
 * two alternating 512-byte slots, then records from {@link #RECORDS_START}, each appended with one
 * positional write. A record is one whole request (a write's data and metadata, or a zeroing), so a
 * crash keeps or loses it as a whole; recovery takes records in sequence-number order and stops at
 * the first that is torn, missing or stale, so what survives is always a prefix of the requests.
 *
 * <p>Appends are serialized (one lock, one write each), which keeps records in sequence order with no
 * gaps; syncs are grouped: concurrent callers of {@link #syncUpTo} share one fsync.
 */
final class Journal {
    static final int SLOT_SIZE = 512;
    static final int RECORDS_START = 4096;
    static final int RECORD_HEADER = 32;
    static final byte WRITE = 1;
    static final byte ZEROES = 2;
    static final int VERSION = 1;
    private static final int HEADER_MAGIC = 0x50494A48; // "PIJH"
    private static final int RECORD_MAGIC = 0x50494A52; // "PIJR"
    private static final int HEADER_BYTES = 44;

    private final StorageFile file;
    private final String fileName;
    private final int dataSize;
    private final int metaSize;
    private final long capacity;
    private final Object syncLock = new Object();
    private final CRC32C crc = new CRC32C();
    private ByteBuffer buf = ByteBuffer.allocateDirect(RECORD_HEADER + (1 << 16)).order(ByteOrder.BIG_ENDIAN);

    // Guarded by this.
    private long generation;
    private long startSeq;
    private long nextSeq;
    private long tail = RECORDS_START;
    /** The last sequence number whose record is written (not yet necessarily durable). */
    private volatile long appendedSeq;
    /** The last sequence number whose record is durable. */
    private volatile long durableSeq;

    /** The header's fields as read. */
    record Header(long generation, long startSeq, boolean clean) {
    }

    /** One record met by a scan. {@code payload} holds data then metadata (empty for zeroes). */
    interface Visitor {
        void record(long pos, byte type, long lba, int blocks, ByteBuffer payload) throws IOException;
    }

    Journal(StorageFile file, String fileName, BlockFormat format, long capacity) {
        this.file = file;
        this.fileName = fileName;
        this.dataSize = format.dataSize();
        this.metaSize = format.metadataSize();
        this.capacity = capacity;
    }

    /** Writes the header of an empty, clean journal into a new file and forces it. */
    static void initialize(StorageFile file, BlockFormat format) throws IOException {
        file.truncate(0);
        file.write(ByteBuffer.allocate(RECORDS_START), 0);
        file.write(headerSlot(1, 1, true, format.dataSize(), format.metadataSize()), slotOffset(1));
        file.sync();
    }

    private static long slotOffset(long generation) {
        return (generation & 1) * SLOT_SIZE;
    }

    private static ByteBuffer headerSlot(long generation, long startSeq, boolean clean, int ds, int ms) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_SIZE).order(ByteOrder.BIG_ENDIAN);
        b.putInt(0, HEADER_MAGIC).putInt(4, VERSION).putLong(8, generation).putLong(16, startSeq)
                .putInt(24, ds).putInt(28, ms).putInt(32, clean ? 1 : 0).putInt(36, 0);
        CRC32C c = new CRC32C();
        c.update(b.array(), 0, HEADER_BYTES - 4);
        b.putInt(HEADER_BYTES - 4, (int) c.getValue());
        return b;
    }

    /**
     * Reads the header: the valid slot of the higher generation. A slot torn by a crash while it
     * was rewritten fails its CRC and the other one, written and forced before it, is used.
     *
     * @throws IOException naming the file when neither slot is valid or the format differs
     */
    Header readHeader() throws IOException {
        long size = file.size();
        if (size < 2 * SLOT_SIZE) {
            throw new IOException("journal " + fileName + " is damaged: header truncated (" + size + " bytes)");
        }
        Header best = null;
        String why = null;
        for (int s = 0; s < 2; s++) {
            ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
            file.readFully(b, (long) s * SLOT_SIZE);
            String problem = slotProblem(b);
            if (problem != null) {
                why = why == null ? problem : why;
                continue;
            }
            Header h = new Header(b.getLong(8), b.getLong(16), b.getInt(32) == 1);
            if (slotOffset(h.generation()) != (long) s * SLOT_SIZE) {
                why = "header slot " + s + " holds generation " + h.generation();
                continue;
            }
            if (best == null || h.generation() > best.generation()) {
                best = h;
            }
        }
        if (best == null) {
            throw new IOException("journal " + fileName + " is damaged: " + why);
        }
        return best;
    }

    private String slotProblem(ByteBuffer b) {
        if (b.getInt(0) != HEADER_MAGIC) {
            return String.format("bad magic 0x%08x", b.getInt(0));
        }
        if (b.getInt(4) != VERSION) {
            return "version " + b.getInt(4) + " is not supported (expected " + VERSION + ")";
        }
        CRC32C c = new CRC32C();
        c.update(b.array(), 0, HEADER_BYTES - 4);
        if ((int) c.getValue() != b.getInt(HEADER_BYTES - 4)) {
            return "header checksum mismatch";
        }
        if (b.getInt(24) != dataSize || b.getInt(28) != metaSize) {
            return "journal is for blocks of " + b.getInt(24) + "+" + b.getInt(28) + ", the volume has "
                    + dataSize + "+" + metaSize;
        }
        return null;
    }

    /**
     * Calls {@code v} for each record from the head of {@code h}, in order, while records are intact
     * and carry the next sequence number; returns how many.
     */
    long scan(Header h, long blockCount, Visitor v) throws IOException {
        long size = file.size();
        long pos = RECORDS_START;
        long seq = h.startSeq();
        ByteBuffer head = ByteBuffer.allocate(RECORD_HEADER).order(ByteOrder.BIG_ENDIAN);
        ByteBuffer payload = ByteBuffer.allocate(0);
        long count = 0;
        while (pos + RECORD_HEADER <= size) {
            head.clear();
            file.readFully(head, pos);
            byte type = head.get(4);
            long lba = head.getLong(16);
            int blocks = head.getInt(24);
            if (head.getInt(0) != RECORD_MAGIC || head.getLong(8) != seq || (type != WRITE && type != ZEROES)
                    || blocks <= 0 || lba < 0 || lba > blockCount - blocks) {
                break;
            }
            long len = type == WRITE ? (long) blocks * (dataSize + metaSize) : 0;
            if (len > Integer.MAX_VALUE || pos + RECORD_HEADER + len > size) {
                break;
            }
            if (payload.capacity() < len) {
                payload = ByteBuffer.allocate((int) len);
            }
            payload.clear().limit((int) len);
            file.readFully(payload, pos + RECORD_HEADER);
            CRC32C c = new CRC32C();
            c.update(payload.array(), 0, (int) len);
            c.update(head.array(), 0, RECORD_HEADER - 4);
            if ((int) c.getValue() != head.getInt(RECORD_HEADER - 4)) {
                break;
            }
            payload.flip();
            v.record(pos, type, lba, blocks, payload);
            pos += RECORD_HEADER + len;
            seq++;
            count++;
        }
        return count;
    }

    /**
     * Starts a new, empty journal generation after every record so far is in the home files (and
     * forced there): the header names the next sequence number as the head and is forced before any
     * new record can overwrite the old ones, so a crash never finds a header pointing at a mix.
     */
    synchronized void reset(long nextSeq, long generationSeen, boolean clean) throws IOException {
        long gen = Math.max(generation, generationSeen) + 1;
        file.write(headerSlot(gen, nextSeq, clean, dataSize, metaSize), slotOffset(gen));
        file.sync();
        generation = gen;
        startSeq = nextSeq;
        this.nextSeq = nextSeq;
        tail = RECORDS_START;
        appendedSeq = nextSeq - 1;
        durableSeq = nextSeq - 1;
    }

    /** As {@link #reset(long, long, boolean)} with the current head: after a checkpoint. */
    synchronized void reset(boolean clean) throws IOException {
        reset(nextSeq, generation, clean);
    }

    /** Whether no record was appended since the last reset. */
    synchronized boolean isEmpty() {
        return tail == RECORDS_START;
    }

    /** Whether appending {@code bytes} more would pass the capacity (an empty journal takes anything). */
    synchronized boolean wouldOverflow(long bytes) {
        return tail > RECORDS_START && tail + bytes > capacity;
    }

    static long recordSize(byte type, int blocks, int dataSize, int metaSize) {
        return RECORD_HEADER + (type == WRITE ? (long) blocks * (dataSize + metaSize) : 0);
    }

    /**
     * Appends one record with one write: a write's data and metadata ({@code data}, {@code meta}:
     * {@code blocks} blocks' worth each; {@code meta} null without metadata), or a zeroing (both null).
     * Returns the record's position, or -1 when it would pass the capacity: the caller checkpoints
     * and tries again.
     */
    synchronized long append(byte type, long lba, int blocks, ScatterList data, ScatterList meta) throws IOException {
        long size = recordSize(type, blocks, dataSize, metaSize);
        if (tail > RECORDS_START && tail + size > capacity) {
            return -1;
        }
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("request of " + blocks + " blocks is too large for one journal record");
        }
        if (buf.capacity() < size) {
            buf = ByteBuffer.allocateDirect((int) size).order(ByteOrder.BIG_ENDIAN);
        }
        ByteBuffer b = buf;
        b.clear();
        int payload = (int) size - RECORD_HEADER;
        if (type == WRITE) {
            int dlen = blocks * dataSize;
            data.read(0, b, RECORD_HEADER, dlen);
            if (metaSize > 0) {
                meta.read(0, b, RECORD_HEADER + dlen, blocks * metaSize);
            }
        }
        long seq = nextSeq;
        b.putInt(0, RECORD_MAGIC).put(4, type).put(5, (byte) 0).putShort(6, (short) 0).putLong(8, seq)
                .putLong(16, lba).putInt(24, blocks);
        // CRC-32C of the payload, then of the header's first 28 bytes.
        crc.reset();
        b.limit(RECORD_HEADER + payload).position(RECORD_HEADER);
        crc.update(b);
        b.limit(RECORD_HEADER - 4).position(0);
        crc.update(b);
        b.limit(RECORD_HEADER + payload).position(0);
        b.putInt(RECORD_HEADER - 4, (int) crc.getValue());
        long pos = tail;
        file.write(b, pos);
        tail = pos + size;
        nextSeq = seq + 1;
        appendedSeq = seq;
        return pos;
    }

    long appendedSeq() {
        return appendedSeq;
    }

    /**
     * Makes every record up to {@code seq} durable. Group commit: a caller whose records were covered
     * by an fsync that began after they were written returns without one of its own.
     */
    void syncUpTo(long seq) throws IOException {
        if (durableSeq >= seq) {
            return;
        }
        synchronized (syncLock) {
            if (durableSeq >= seq) {
                return;
            }
            long upto = appendedSeq;
            file.sync();
            if (upto > durableSeq) {
                durableSeq = upto;
            }
        }
    }

    /** Reads {@code dst.remaining()} bytes of a record's payload at file position {@code pos}. */
    void read(ByteBuffer dst, long pos) throws IOException {
        file.readFully(dst, pos);
    }

    void close() throws IOException {
        file.close();
    }
}
