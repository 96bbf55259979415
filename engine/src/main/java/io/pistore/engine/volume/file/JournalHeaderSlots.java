package io.pistore.engine.volume.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The journal's header as it lies on disk: two alternating {@link Journal#SLOT_SIZE}-byte slots, each
 * a header with its CRC (layout in docs/FORMAT.md). Invariant: a header is read only from a slot whose
 * magic, version, CRC, block sizes and ring size check out and whose position matches its slot
 * sequence, so a slot torn by a crash while it was rewritten is never taken; the other one, written
 * and forced before it, is.
 */
final class JournalHeaderSlots {
    private static final int HEADER_MAGIC = 0x50494A48; // "PIJH"
    private static final int OLDEST_VERSION = 1;
    /** Bytes of a slot under its CRC and the CRC: version 3 adds the segment count at 52. */
    private static final int HEADER_BYTES = 60;
    private static final int OLD_HEADER_BYTES = 56;

    private JournalHeaderSlots() {
    }

    /** Where the slot of slot sequence {@code slotSeq} starts: the two slots alternate. */
    static long slotOffset(long slotSeq) {
        return (slotSeq & 1) * Journal.SLOT_SIZE;
    }

    /** The slot that holds {@code h}, for a journal of blocks of {@code ds}+{@code ms} bytes, with its CRC. */
    static ByteBuffer encode(Journal.Header h, int ds, int ms) {
        ByteBuffer b = ByteBuffer.allocate(Journal.SLOT_SIZE).order(ByteOrder.BIG_ENDIAN);
        b.putInt(0, HEADER_MAGIC).putInt(4, Journal.VERSION).putLong(8, h.slotSeq()).putLong(16, h.epoch())
                .putLong(24, h.startSeq()).putLong(32, h.startPos()).putInt(40, ds).putInt(44, ms)
                .putInt(48, h.clean() ? 1 : 0).putInt(52, h.segments());
        CRC32C c = new CRC32C();
        c.update(b.array(), 0, HEADER_BYTES - 4);
        b.putInt(HEADER_BYTES - 4, (int) c.getValue());
        return b;
    }

    /**
     * Reads the header: the valid slot of the higher slot sequence. A slot torn by a crash while it
     * was rewritten fails its CRC, and the other one, written and forced before it, is used.
     *
     * @throws IOException naming the file when neither slot is valid or the format differs
     */
    static Journal.Header read(StorageFile file, String fileName, int dataSize, int metaSize) throws IOException {
        long size = file.size();
        if (size < 2 * Journal.SLOT_SIZE) {
            throw new IOException("journal " + fileName + " is damaged: header truncated (" + size + " bytes)");
        }
        Journal.Header best = null;
        String why = null;
        for (int s = 0; s < 2; s++) {
            ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
            file.readFully(b, (long) s * Journal.SLOT_SIZE);
            String problem = slotProblem(b, dataSize, metaSize);
            Journal.Header h = problem != null ? null
                    : new Journal.Header(b.getLong(8), b.getLong(16), b.getLong(24), b.getLong(32), b.getInt(48) == 1,
                    b.getInt(4) >= 3 ? b.getInt(52) : Journal.LEGACY_SEGMENTS);
            if (h != null && slotOffset(h.slotSeq()) != (long) s * Journal.SLOT_SIZE) {
                problem = "header slot " + s + " holds slot sequence " + h.slotSeq();
            }
            if (problem != null) {
                why = why == null ? problem : why;
            } else if (best == null || h.slotSeq() > best.slotSeq()) {
                best = h;
            }
        }
        if (best == null) {
            throw new IOException("journal " + fileName + " is damaged: " + why);
        }
        return best;
    }

    private static String slotProblem(ByteBuffer b, int dataSize, int metaSize) {
        if (b.getInt(0) != HEADER_MAGIC) {
            return String.format("bad magic 0x%08x", b.getInt(0));
        }
        if (b.getInt(4) < OLDEST_VERSION || b.getInt(4) > Journal.VERSION) {
            return "version " + b.getInt(4) + " is not supported (expected " + OLDEST_VERSION + " to " + Journal.VERSION + ")";
        }
        int bytes = b.getInt(4) >= 3 ? HEADER_BYTES : OLD_HEADER_BYTES; // the CRC follows what it covers
        CRC32C c = new CRC32C();
        c.update(b.array(), 0, bytes - 4);
        if ((int) c.getValue() != b.getInt(bytes - 4)) {
            return "header checksum mismatch";
        }
        if (b.getInt(4) >= 3 && (b.getInt(52) < 2 || b.getInt(52) > Journal.MOST_SEGMENTS)) {
            return "a ring of " + b.getInt(52) + " segments";
        }
        if (b.getInt(40) != dataSize || b.getInt(44) != metaSize) {
            return "journal is for blocks of " + b.getInt(40) + "+" + b.getInt(44) + ", the volume has "
                    + dataSize + "+" + metaSize;
        }
        if (b.getLong(32) < Journal.RECORDS_START) {
            return "head at " + b.getLong(32) + " is inside the header";
        }
        return null;
    }
}
