package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * EXTENDED COPY (LID1) and RECEIVE COPY RESULTS (SPC-4 6.4, 6.27): the unit as copy manager, copying
 * blocks within itself or between it and other units of the server without the data crossing the
 * network (what VMware's "full copy" offload sends). Target descriptors are identification
 * descriptors (E4h) naming a unit by the NAA designator of its device identification page; another
 * unit ({@link Units}) is reached as the asking initiator would reach it: not at all where its
 * access rules grant it none (COPY TARGET DEVICE NOT REACHABLE), not written where they grant it
 * read-only, and under that unit's reservations for the same initiator port. Any other descriptor
 * type is refused. Segment descriptors are block to block (02h) between units of one block size. Each segment is
 * read (the stored PI checked) and written in requests of at most the transfer limit, back to
 * front when the destination overlaps the source's end. Between units of one format with PI the
 * tuples travel with the data (the initiator's application tags kept, Type 1's reference tags moved
 * to the destination's LBAs), as a host copying with RDPROTECT and WRPROTECT 1 would; Type 2 and
 * other pairs get PI generated anew from the data and LBAs. A copy is not atomic: a failure leaves the segments before it copied, as SPC-4 allows.
 * The outcome of a copy whose list ID is held (LIST ID USAGE 00b or 01b) is kept per I_T nexus for
 * RECEIVE COPY STATUS.
 */
final class ScsiExtendedCopy {
    static final int EXTENDED_COPY = 0x83;
    static final int RECEIVE_COPY_RESULTS = 0x84;
    static final int COPY_STATUS = 0x00;
    static final int OPERATING_PARAMETERS = 0x03;
    static final int MAX_TARGETS = 4;
    static final int MAX_SEGMENTS = 16;
    static final int MAX_DESCRIPTOR_LIST = 1024;
    static final int IDENTIFICATION_TARGET = 0xE4;
    static final int BLOCK_TO_BLOCK = 0x02;
    /** Copy statuses kept per nexus; the oldest go first. */
    private static final int KEPT_STATUSES = 64;
    private static final int HEADER = 16;
    private static final int COPY_ABORTED = 0x0A;

    private final BlockDevice device;
    private final ScsiRangeLock writes;
    private final int maxTransferBlocks;
    private final byte[] designator;
    private final Units units;
    /** Per nexus, per held list ID: the RECEIVE COPY STATUS answer of its last copy. */
    private final Map<String, LinkedHashMap<Integer, byte[]>> statuses = new java.util.HashMap<>();

    /**
     * A unit a copy reads or writes: its device, the lock its writes hold, and why the asking
     * initiator may not read it or write it now (null: it may).
     */
    record Unit(BlockDevice device, ScsiRangeLock writes, ScsiResult readRefusal, ScsiResult writeRefusal) {
    }

    /** The server's other units, as one initiator port reaches them. */
    interface Units {
        /**
         * The unit whose NAA designator is {@code naa} (8 bytes), as initiator port {@code nexus} of
         * a session on this unit reaches it; null when no unit has it or none is granted to it.
         */
        Unit find(byte[] naa, String nexus);
    }

    /**
     * {@code designator}: this unit's NAA designation descriptor (header and 8 bytes, VPD 83h);
     * {@code units}: the others.
     */
    ScsiExtendedCopy(BlockDevice device, ScsiRangeLock writes, int maxTransferBlocks, byte[] designator, Units units) {
        this.device = device;
        this.writes = writes;
        this.maxTransferBlocks = maxTransferBlocks;
        this.designator = designator;
        this.units = units;
    }

    /**
     * This unit as a copy through another unit reaches it for initiator port {@code nexus}: reads and
     * writes refused as {@code reservations} hold them off for that port, writes also where
     * {@code writable} is false (a read-only grant, a write-protected unit).
     */
    Unit asUnit(String nexus, ScsiReservations reservations, boolean writable) {
        ScsiResult conflict = ScsiResult.status(ScsiResult.RESERVATION_CONFLICT);
        byte[] read = new byte[16];
        read[0] = (byte) 0x88; // READ(16)
        byte[] write = new byte[16];
        write[0] = (byte) 0x8A; // WRITE(16)
        return new Unit(device, writes, reservations.conflicts(nexus, read) ? conflict : null,
                !writable ? ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00)
                : reservations.conflicts(nexus, write) ? conflict : null);
    }

    /** Bytes of Data-Out: the parameter list length. */
    static long dataOutBytes(byte[] cdb) {
        return Cdb.u32(cdb, 10);
    }

    ScsiResult copy(String nexus, byte[] cdb, byte[] p, boolean readOnly) {
        long length = Cdb.u32(cdb, 10);
        if (length == 0) {
            return ScsiResult.good(); // no copy: not an error (SPC-4)
        }
        if (p.length < HEADER || length < HEADER) {
            return listLengthError();
        }
        int listId = p[0] & 0xff;
        int usage = (p[1] >>> 3) & 0x03;
        int targetsLength = Cdb.u16(p, 2);
        long segmentsLength = Cdb.u32(p, 8);
        if (usage == 3 && listId != 0 || Cdb.u32(p, 12) != 0) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00); // list ID with usage 11b; inline data
        }
        if (targetsLength + segmentsLength > MAX_DESCRIPTOR_LIST
                || HEADER + targetsLength + segmentsLength > Math.min(length, p.length)) {
            return listLengthError();
        }
        if (targetsLength % 32 != 0) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
        }
        int targets = targetsLength / 32;
        if (targets > MAX_TARGETS) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x06); // TOO MANY TARGET DESCRIPTORS
        }
        Unit[] unit = new Unit[targets]; // null: not reachable
        for (int t = 0; t < targets; t++) {
            int at = HEADER + 32 * t;
            if ((p[at] & 0xff) != IDENTIFICATION_TARGET) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x07); // UNSUPPORTED TARGET DESCRIPTOR TYPE CODE
            }
            // LU ID TYPE and NUL are obsolete in SPC-4: ignored; a block device of the unit's block size
            if ((p[at + 1] & 0x1f) != 0) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
            }
            // the designator type, length and bytes name the unit; code set and association are not compared
            boolean naa = (p[at + 5] & 0x0f) == (designator[1] & 0x0f) && p[at + 7] == designator[3];
            if (naa && java.util.Arrays.equals(p, at + 8, at + 4 + designator.length, designator, 4, designator.length)) {
                unit[t] = new Unit(device, writes, null, null);
            } else if (naa) {
                unit[t] = units.find(java.util.Arrays.copyOfRange(p, at + 8, at + 16), nexus);
            }
            int blockLength = (p[at + 29] & 0xff) << 16 | Cdb.u16(p, at + 30);
            if (unit[t] != null && blockLength != unit[t].device().format().dataSize()) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
            }
        }
        int segmentsAt = HEADER + targetsLength;
        long end = segmentsAt + segmentsLength;
        int segments = 0;
        for (long at = segmentsAt; at < end; segments++) {
            if (at + 4 > end) {
                return listLengthError();
            }
            if ((p[(int) at] & 0xff) != BLOCK_TO_BLOCK) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x09); // UNSUPPORTED SEGMENT DESCRIPTOR TYPE CODE
            }
            if (segments == MAX_SEGMENTS) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x08); // TOO MANY SEGMENT DESCRIPTORS
            }
            int len = Cdb.u16(p, (int) at + 2);
            if (len != 0x18 || at + 4 + len > end) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
            }
            at += 4 + len;
        }
        if (readOnly) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        long copied = 0;
        int done = 0;
        ScsiResult outcome = ScsiResult.good();
        for (; done < segments; done++) {
            int at = segmentsAt + 28 * done;
            int src = Cdb.u16(p, at + 4);
            int dst = Cdb.u16(p, at + 6);
            if (src >= targets || dst >= targets || unit[src] == null || unit[dst] == null) {
                outcome = ScsiResult.check(COPY_ABORTED, 0x0D, 0x02); // COPY TARGET DEVICE NOT REACHABLE
                break;
            }
            Unit from = unit[src];
            Unit to = unit[dst];
            ScsiResult r = from.readRefusal() != null ? from.readRefusal() : to.writeRefusal() != null ? to.writeRefusal()
                    : copySegment(from, to, Pdu.getLong(p, at + 12), Pdu.getLong(p, at + 20), Cdb.u16(p, at + 10));
            if (r.status != ScsiResult.GOOD) {
                outcome = r;
                break;
            }
            copied += (long) Cdb.u16(p, at + 10) * from.device().format().dataSize();
        }
        if (usage != 2 && usage != 3) {
            keep(nexus, listId, outcome.status == ScsiResult.GOOD, done, copied);
        }
        return outcome;
    }

    private static ScsiResult listLengthError() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00); // PARAMETER LIST LENGTH ERROR
    }

    /**
     * Copies {@code n} blocks from {@code from} of unit {@code source} to {@code to} of unit {@code
     * dest}, in requests of at most the transfer limit.
     */
    private ScsiResult copySegment(Unit source, Unit dest, long from, long to, int n) {
        if (source.device().format().dataSize() != dest.device().format().dataSize()) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00); // block to block of one size only
        }
        if (Cdb.outOfRange(from, n, source.device().info().blockCount())
                || Cdb.outOfRange(to, n, dest.device().info().blockCount())) {
            return ScsiResult.check(COPY_ABORTED, 0x00, 0x00);
        }
        // the destination overlaps the source's end
        boolean backwards = source.device() == dest.device() && to > from && to < from + n;
        BlockFormat f = source.device().format();
        int ds = f.dataSize();
        // Tuples travel between units of one format with PI, but Type 2 (whose reference tags the
        // initiator's 32-byte CDBs chose): the application tags kept, Type 1's reference tags moved
        boolean tuples = f.hasPi() && f.equals(dest.device().format()) && f.type() != PiType.TYPE_2;
        int most = Math.min(maxTransferBlocks, n);
        byte[] buffer = new byte[most * ds];
        byte[] tupleBuffer = tuples ? new byte[most * f.metadataSize()] : null;
        for (int left = n; left > 0; ) {
            int k = Math.min(maxTransferBlocks, left);
            int offset = backwards ? left - k : n - left;
            ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, k * ds).slice(); // one buffer for every chunk of the segment
            ByteBuffer meta = tuples ? ByteBuffer.wrap(tupleBuffer, 0, k * f.metadataSize()).slice() : null;
            Completion r = ScsiLun.await(() -> tuples
                    ? source.device().read(from + offset, ScatterList.of(chunk.duplicate()), ScatterList.of(meta.duplicate()),
                            stored(f, from + offset))
                    : source.device().read(from + offset, ScatterList.of(chunk.duplicate())));
            if (!r.isSuccess()) {
                return ScsiResult.of(r, false);
            }
            if (tuples && f.type() == PiType.TYPE_1) { // escaped (unwritten) blocks keep theirs
                Pi.remapRefTagSeparate(stored(f, from + offset).context(f), ScatterList.of(meta.duplicate()), k,
                        f.refTagOf(to + offset), false);
            }
            ScsiResult w = written(dest, to + offset, k, chunk, meta);
            if (w.status != ScsiResult.GOOD) {
                return w;
            }
            left -= k;
        }
        return ScsiResult.good();
    }

    /**
     * The checks of a tuple as stored at {@code lba}, read or written as it is: the guard, and the
     * reference tag but for Type 3 (the application tag is the initiator's, never compared).
     */
    private static Protection stored(BlockFormat f, long lba) {
        return Protection.pass(CheckFlags.of(true, false, f.type() != PiType.TYPE_3), f.refTagOf(lba), 0, 0);
    }

    /**
     * Writes a chunk holding its blocks shared, as every WRITE does (COMPARE AND WRITE stays atomic),
     * with its tuples ({@code meta}) or, null, PI generated for its LBAs.
     */
    private static ScsiResult written(Unit dest, long lba, int k, ByteBuffer chunk, ByteBuffer meta) {
        BlockDevice d = dest.device();
        return dest.writes().holding(lba, k, false, () -> {
            Completion w = ScsiLun.await(() -> meta == null
                    ? d.write(lba, ScatterList.of(chunk.duplicate()), null, d.insertStrip(lba), false)
                    : d.write(lba, ScatterList.of(chunk.duplicate()), ScatterList.of(meta.duplicate()),
                            stored(d.format(), lba), false));
            return w.isSuccess() ? ScsiResult.good() : ScsiResult.of(w, true);
        });
    }

    private synchronized void keep(String nexus, int listId, boolean ok, int segments, long bytes) {
        byte[] s = new byte[12];
        s[3] = 8; // available data
        s[4] = (byte) (ok ? 0x01 : 0x02); // copy manager status: completed without, or with, errors
        s[5] = (byte) (segments >>> 8);
        s[6] = (byte) segments;
        s[7] = (byte) 0xF1; // transfer count units: KiB
        Pdu.putInt(s, 8, (int) Math.min(0xFFFFFFFFL, bytes / 1024));
        LinkedHashMap<Integer, byte[]> kept = statuses.computeIfAbsent(nexus, k -> new LinkedHashMap<>());
        kept.remove(listId);
        kept.put(listId, s);
        if (kept.size() > KEPT_STATUSES) {
            kept.remove(kept.keySet().iterator().next());
        }
    }

    synchronized void nexusLost(String nexus) {
        statuses.remove(nexus);
    }

    /** RECEIVE COPY RESULTS: COPY STATUS of a held list ID of this nexus, or OPERATING PARAMETERS. */
    synchronized ScsiResult results(String nexus, byte[] cdb) {
        int sa = cdb[1] & 0x1f;
        long alloc = Cdb.u32(cdb, 10);
        if (sa == COPY_STATUS) {
            byte[] s = statuses.getOrDefault(nexus, new LinkedHashMap<>()).get(cdb[2] & 0xff);
            return s == null ? ScsiResult.invalidField() : ScsiResult.cut(s, alloc);
        }
        byte[] b = new byte[46];
        Pdu.putInt(b, 0, b.length - 4);
        b[9] = MAX_TARGETS;
        b[11] = MAX_SEGMENTS;
        Pdu.putInt(b, 12, MAX_DESCRIPTOR_LIST);
        Pdu.putInt(b, 16, 0xFFFF * device.format().dataSize()); // maximum segment length, in bytes
        b[35] = 1; // total concurrent copies
        b[36] = 1; // maximum concurrent copies
        b[43] = 2; // implemented descriptor list length
        b[44] = BLOCK_TO_BLOCK;
        b[45] = (byte) IDENTIFICATION_TARGET;
        return ScsiResult.cut(b, alloc);
    }

    /** The third-party copy VPD page's body (after its 4-byte header): a supported commands descriptor. */
    static byte[] supportedCommandsDescriptor() {
        return new byte[] {0x00, 0x01, 0x00, 0x08, // descriptor type 0001h, length 8
            0x07, // commands supported list length
            (byte) EXTENDED_COPY, 1, 0x00,
            (byte) RECEIVE_COPY_RESULTS, 2, COPY_STATUS, OPERATING_PARAMETERS};
    }
}
