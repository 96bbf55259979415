package io.pistore.engine.volume.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Reads a {@link Journal}'s records back in sequence order from a head, for recovery and
 * checkpoints. Invariant: it takes a record only if it is intact (its header always, its payload's
 * CRC where asked), of the head's epoch and carries the next sequence number, looking for each
 * right after the previous one or else at the start of the next segment, and stops at the first
 * that is not: what it returns is always a prefix of the requests.
 */
final class JournalScanner {
    private final Journal journal;
    private final StorageFile file;
    private final int dataSize;
    private final int metaSize;
    private final long segmentSize;

    /** Scans of {@code journal}, stored in {@code file}, for blocks of {@code dataSize}+{@code metaSize} bytes. */
    JournalScanner(Journal journal, StorageFile file, int dataSize, int metaSize, long segmentSize) {
        this.journal = journal;
        this.file = file;
        this.dataSize = dataSize;
        this.metaSize = metaSize;
        this.segmentSize = segmentSize;
    }

    /**
     * Calls {@code v} for each record from the head {@code h}, in order, while records are intact,
     * of {@code h}'s epoch and carry the next sequence number, up to sequence {@code lastSeq};
     * returns how many. Reads the file in large pieces, not record by record.
     * {@code verifyPayload} false skips the payload's CRC: for a checkpoint, whose records
     * this process appended whole (each append returned) in the current epoch, so no crash can have
     * torn them; their headers are still checked. Measured: checking 4 KiB payloads again was about
     * a fifth of a checkpoint's CPU. Recovery always checks.
     */
    long scan(Journal.Header h, long blockCount, long lastSeq, boolean verifyPayload, Journal.Visitor v)
            throws IOException {
        int segments = h.segments();
        long pos = h.startPos();
        int segment = (int) Math.min(segments - 1, (pos - Journal.RECORDS_START) / segmentSize);
        long seq = h.startSeq();
        Window w = new Window(file.size());
        long count = 0;
        while (seq <= lastSeq) {
            ByteBuffer rec = readRecord(w, pos, seq, h.epoch(), blockCount, verifyPayload);
            if (rec == null) {
                // Not right after the previous record: the writer may have moved to the next segment.
                segment = (segment + 1) % segments;
                pos = Journal.RECORDS_START + segment * segmentSize;
                rec = readRecord(w, pos, seq, h.epoch(), blockCount, verifyPayload);
                if (rec == null) {
                    break;
                }
            }
            // The segment the record is in: a record right after the previous one may start the next
            // segment (the previous one filled its segment to the byte), and the next search for a
            // record at a segment's start must begin after that one.
            segment = (int) ((pos - Journal.RECORDS_START) / segmentSize);
            int blocks = rec.getInt(32);
            byte type = rec.get(4) == Journal.WRITE_IN_MEMORY ? Journal.WRITE : rec.get(4);
            v.record(seq, type, rec.getLong(24), blocks, pos);
            pos += rec.remaining();
            seq++;
            count++;
        }
        return count;
    }

    /** A piece of the file read ahead, so a scan makes one read call per megabyte, not two per record. */
    private final class Window {
        private static final int SIZE = 1 << 20;
        final long fileSize;
        /**
         * Direct, so that neither reading a piece nor writing its blocks home with positional writes
         * copies through a temporary direct buffer of the JDK's (two copies of every block a heap
         * buffer cost a checkpoint on a disk, where nothing is mapped).
         */
        ByteBuffer buf = ByteBuffer.allocateDirect(SIZE).order(ByteOrder.BIG_ENDIAN);
        long start = -1;
        int valid;

        Window(long fileSize) {
            this.fileSize = fileSize;
        }

        /** {@code [pos, pos + len)} of the file as a buffer, or null past its end. */
        ByteBuffer get(long pos, int len) throws IOException {
            ByteBuffer m = journal.mapped(pos, len);
            if (m != null) {
                return m.slice().order(ByteOrder.BIG_ENDIAN);
            }
            if (pos + len > fileSize) {
                return null;
            }
            if (start < 0 || pos < start || pos + len > start + valid) {
                if (buf.capacity() < len) {
                    buf = ByteBuffer.allocateDirect(len).order(ByteOrder.BIG_ENDIAN);
                }
                buf.clear().limit((int) Math.min(buf.capacity(), fileSize - pos));
                file.readFully(buf, pos);
                start = pos;
                valid = buf.position();
            }
            int at = (int) (pos - start);
            return buf.duplicate().order(ByteOrder.BIG_ENDIAN).limit(at + len).position(at).slice()
                    .order(ByteOrder.BIG_ENDIAN);
        }
    }

    /** The record at {@code pos} (header and payload), or null if it is not the one expected there. */
    private ByteBuffer readRecord(Window w, long pos, long seq, long epoch, long blockCount, boolean verifyPayload)
            throws IOException {
        ByteBuffer head = w.get(pos, Journal.RECORD_HEADER);
        if (head == null) {
            return null;
        }
        byte type = head.get(4);
        long lba = head.getLong(24);
        int blocks = head.getInt(32);
        if (head.getInt(0) != Journal.RECORD_MAGIC || head.getLong(8) != epoch || head.getLong(16) != seq
                || (type != Journal.WRITE && type != Journal.ZEROES && type != Journal.WRITE_IN_MEMORY) || blocks <= 0 || lba < 0
                || lba > blockCount - blocks) {
            return null;
        }
        long len = type != Journal.ZEROES ? (long) blocks * (dataSize + metaSize) : 0;
        if (len > segmentSize) {
            return null;
        }
        ByteBuffer rec = w.get(pos, Journal.RECORD_HEADER + (int) len);
        if (rec == null) {
            return null;
        }
        if (!verifyPayload) {
            return rec;
        }
        CRC32C c = new CRC32C();
        if (type != Journal.WRITE_IN_MEMORY) {
            c.update(rec.duplicate().position(Journal.RECORD_HEADER));
        }
        c.update(rec.duplicate().limit(Journal.RECORD_HEADER - 4));
        if ((int) c.getValue() != rec.getInt(Journal.RECORD_HEADER - 4)) {
            return null;
        }
        return rec;
    }
}
