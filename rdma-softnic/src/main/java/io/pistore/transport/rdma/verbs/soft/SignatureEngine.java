package io.pistore.transport.rdma.verbs.soft;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigDomain;
import io.pistore.transport.rdma.verbs.SigErrorType;
import java.nio.ByteBuffer;

/**
 * The soft NIC's signature engine: moves blocks between an integrity MR's memory domain (data list
 * plus separate 8-byte-per-interval metadata list) and its wire domain (data, interleaved with 8-byte
 * T10-DIF tuples when the wire carries PI), as the mlx5 strided signature segment does.
 *
 * <p>Per block, the domain the PI comes from is checked (guard, then ref tag, then app tag: mlx5's
 * syndrome priority), under the check mask, the escapes and the app-tag mask; the first failure of
 * the registration is latched on the MR with the block's byte offset in the interleaved stream of
 * data and 8-byte tuples (block × (interval + 8), also when the wire carries no PI: mlx5's
 * {@code sig_err_offset}, which iSER divides by interval + 8), and the transfer goes on and succeeds. The PI of the other domain is then produced: fields equal in both
 * domains are copied (mlx5's copy mask), others regenerated from that domain (guard conversion
 * between CRC and IP checksum, ref-tag remapping); a domain without PI gets none (strip), a domain
 * with PI fed from one without gets fresh PI (insert).
 *
 * <p><b>Batched path.</b> Where the integrity library's semantics match the domain's, a transfer
 * costs one {@link Pi#verify} over all its blocks (to find the first failing block, if any) and one
 * {@link Pi#generate} (where PI is produced); both run natively when the native guard library is
 * loaded. The match: the interval is a format data size (a power of two, 512 to 64 KiB); the escape
 * rule is the library's Type 1/2 rule (app escape without ref escape) or its Type 3 rule (both), or
 * no block carries the escape app tag at all; a reference-tag check the library cannot express
 * (constant tags with Type 1/2 escapes, or any ref check with Type 3 escapes) is a plain scan of the
 * tuples. The library checks app before ref while mlx5 checks ref before app, so only the
 * <em>first failing block</em> is taken from the library; that block is then checked again by the
 * per-block code below, which latches exactly what the per-block engine would. Anything else (520
 * and 4160-byte intervals, app tags wider than 16 bits) runs block by block, and so do transfers of
 * fewer than {@link #BATCH_MIN_BLOCKS} blocks, where the library's per-call cost outweighs the gain.
 *
 * <p>A transfer through an integrity MR that carries PI must cover whole wire blocks. One engine per
 * MR; not thread-safe (the MR serialises its transfers).
 */
final class SignatureEngine {
    private static final int DIF = SigAttrs.DIF_SIZE;
    /**
     * Transfers of fewer blocks run block by block: a library call costs more than one guard call
     * (its context, lists and walker), which a few 4 KiB blocks do not pay back; from this many on,
     * batching is cheaper per block (docs/RDMA.md#why-the-signature-engine-batches-from-8-blocks).
     */
    static final int BATCH_MIN_BLOCKS = 8;

    private final int batchMinBlocks;

    SignatureEngine() {
        this(BATCH_MIN_BLOCKS);
    }

    /** An engine that batches transfers of at least {@code batchMinBlocks} blocks (tests use 1). */
    SignatureEngine(int batchMinBlocks) {
        this.batchMinBlocks = batchMinBlocks;
    }

    /** Scratch tuples of one transfer. */
    private byte[] tuples = new byte[DIF * 16];
    /** Transfers done in batches and block by block (tests check which path ran). */
    long batched;
    long perBlock;

    /** Data bytes per tuple of a transfer: the memory domain's interval where it carries PI, else the wire's. */
    private static int interval(SigAttrs a) {
        return a.mem.isDif() ? a.mem.piInterval : a.wire.piInterval;
    }

    /** Bytes one block takes on the wire: its data, and its tuple where the wire carries PI. */
    private static int wireBlock(SigAttrs a) {
        return interval(a) + (a.wire.isDif() ? DIF : 0);
    }

    /** Why a transfer with PI in either domain cannot run (it does not cover whole wire blocks), or null. */
    private static String refusal(SigAttrs a, long offset, int len) {
        int wb = wireBlock(a);
        if (offset % wb != 0 || len % wb != 0) {
            return "transfer [" + offset + ", +" + len + ") does not cover whole blocks of " + wb + " wire bytes";
        }
        return null;
    }

    /** Whether both domains carry PI with the same guard (type and seed), so it is copied (mlx5's copy mask). */
    private static boolean sameGuard(SigDomain x, SigDomain y) {
        return x.isDif() && y.isDif() && x.bgType == y.bgType && x.bg == y.bg;
    }

    /** Whether both domains carry PI with the same app tag, so it is copied. */
    private static boolean sameApp(SigDomain x, SigDomain y) {
        return x.isDif() && y.isDif() && x.appTag == y.appTag;
    }

    /** Whether both domains carry PI with the same reference tags (initial tag and remapping), so they are copied. */
    private static boolean sameRef(SigDomain x, SigDomain y) {
        return x.isDif() && y.isDif() && x.refTag == y.refTag && x.refRemap == y.refRemap;
    }

    /** Whether a transfer of {@code n} blocks runs block by block rather than batched (and counts which). */
    private boolean goesPerBlock(int n, int interval, SigDomain mem, SigDomain wire) {
        if (n < batchMinBlocks || !batchable(interval, mem) || !batchable(interval, wire)) {
            perBlock++;
            return true;
        }
        batched++;
        return false;
    }

    // ---------------------------------------------------------------- memory -> wire

    String memoryToWire(SigLatch latch, SigAttrs a, MemView data, MemView meta, long offset, byte[] dst, int pos,
                        int len) {
        SigDomain mem = a.mem;
        SigDomain wire = a.wire;
        if (!mem.isDif() && !wire.isDif()) {
            data.read(offset, dst, pos, len);
            return null;
        }
        String refused = refusal(a, offset, len);
        if (refused != null || len == 0) {
            return refused;
        }
        int interval = interval(a);
        int wb = wireBlock(a);
        long first = offset / wb;
        int n = len / wb;
        if (goesPerBlock(n, interval, mem, wire)) {
            return perBlockMemoryToWire(latch, a, data, meta, offset, dst, pos, len);
        }
        // data into the wire layout
        if (wire.isDif()) {
            for (int k = 0; k < n; k++) {
                data.read((first + k) * interval, dst, pos + k * wb, interval);
            }
        } else {
            data.read(first * interval, dst, pos, n * interval);
        }
        byte[] t = null;
        if (mem.isDif()) {
            t = tuples(n);
            meta.read(first * DIF, t, 0, n * DIF);
            if (wire.isDif()) {
                for (int k = 0; k < n; k++) {
                    System.arraycopy(t, k * DIF, dst, pos + k * wb + interval, DIF);
                }
            }
            if (a.checkMask != 0) {
                ScatterList d;
                ScatterList m;
                if (wire.isDif()) {
                    d = ScatterList.of(ByteBuffer.wrap(dst, pos, n * wb));
                    m = null;
                } else {
                    d = ScatterList.of(ByteBuffer.wrap(dst, pos, n * interval));
                    m = ScatterList.of(ByteBuffer.wrap(t, 0, n * DIF));
                }
                checkBatch(latch, a.checkMask, mem, interval, first, n, d, m, t, 0, DIF, dst, pos, wb, interval + DIF);
            }
        }
        if (wire.isDif()) {
            boolean guardSame = sameGuard(mem, wire);
            boolean appSame = sameApp(mem, wire);
            boolean refSame = sameRef(mem, wire);
            if (!(guardSame && appSame && refSame)) {
                Pi.generate(generateContext(wire, interval, first), ScatterList.of(ByteBuffer.wrap(dst, pos, n * wb)), n);
                if (mem.isDif()) {
                    for (int k = 0; k < n; k++) {
                        copyFields(t, k * DIF, dst, pos + k * wb + interval, guardSame, appSame, refSame);
                    }
                }
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- wire -> memory

    String wireToMemory(SigLatch latch, SigAttrs a, MemView data, MemView meta, long offset, byte[] src, int pos,
                        int len) {
        SigDomain mem = a.mem;
        SigDomain wire = a.wire;
        if (!mem.isDif() && !wire.isDif()) {
            data.write(offset, src, pos, len);
            return null;
        }
        String refused = refusal(a, offset, len);
        if (refused != null || len == 0) {
            return refused;
        }
        int interval = interval(a);
        int wb = wireBlock(a);
        long first = offset / wb;
        int n = len / wb;
        if (goesPerBlock(n, interval, mem, wire)) {
            return perBlockWireToMemory(latch, a, data, meta, offset, src, pos, len);
        }
        if (wire.isDif()) {
            for (int k = 0; k < n; k++) {
                data.write((first + k) * interval, src, pos + k * wb, interval);
            }
            if (a.checkMask != 0) {
                checkBatch(latch, a.checkMask, wire, interval, first, n,
                        ScatterList.of(ByteBuffer.wrap(src, pos, n * wb)), null, src, pos + interval, wb, src, pos, wb,
                        interval + DIF);
            }
        } else {
            data.write(first * interval, src, pos, n * interval);
        }
        if (mem.isDif()) {
            boolean guardSame = sameGuard(mem, wire);
            boolean appSame = sameApp(mem, wire);
            boolean refSame = sameRef(mem, wire);
            byte[] out = tuples(n);
            if (!(guardSame && appSame && refSame)) {
                // fresh memory-domain PI over the data just written (DIX layout: data list, tuple array)
                Pi.generate(generateContext(mem, interval, first), data.list.slice(first * interval, (long) n * interval),
                        ScatterList.of(ByteBuffer.wrap(out, 0, n * DIF)), n);
            }
            if (wire.isDif()) {
                for (int k = 0; k < n; k++) {
                    copyFields(src, pos + k * wb + interval, out, k * DIF, guardSame, appSame, refSame);
                }
            }
            meta.write(first * DIF, out, 0, n * DIF);
        }
        return null;
    }

    // ---------------------------------------------------------------- the batched check

    /**
     * Finds the first block of the run that fails a check of domain {@code d} and latches it as the
     * per-block check would. {@code d}/{@code m} are the run as the library sees it (interleaved when
     * {@code m} is null); tuple k is at {@code tb[tOff + k * tStride]}, block k's data at
     * {@code db[dOff + k * dStride]}; {@code ob} is the block size of the error offsets (interval + 8).
     */
    private void checkBatch(SigLatch latch, int mask, SigDomain d, int interval, long first, int n, ScatterList dl,
                            ScatterList ml, byte[] tb, int tOff, int tStride, byte[] db, int dOff, int dStride, int ob) {
        boolean guard = (mask & SigAttrs.CHECK_GUARD) != 0;
        boolean app = (mask & SigAttrs.CHECK_APPTAG) != 0;
        boolean ref = (mask & SigAttrs.CHECK_REFTAG) != 0;
        // the library's escape rule for this domain, or none at all when no block carries 0xFFFF
        PiType type;
        if (d.appEscape && !d.refEscape) {
            type = PiType.TYPE_1;
        } else if (d.appEscape) {
            type = PiType.TYPE_3;
        } else {
            type = PiType.TYPE_1;
            for (int k = 0; k < n; k++) {
                if (u16(tb, tOff + k * tStride + 2) == 0xFFFF) {
                    // the engine would check this block, the library would skip it
                    perBlockCheck(latch, mask, d, interval, first, 0, n, tb, tOff, tStride, db, dOff, dStride, ob);
                    return;
                }
            }
        }
        boolean refByLibrary = ref && type == PiType.TYPE_1 && d.refRemap;
        int firstBad = n;
        if (guard || app || refByLibrary) {
            PiContext ctx = PiContext.builder(format(d, interval, type))
                    .checks(CheckFlags.of(guard, app, refByLibrary))
                    .initialRefTag(d.refTagOf(first))
                    .appTag(d.appTag)
                    .appMask(d.apptagCheckMask)
                    .guardSeed(d.bg & 0xFFFF)
                    .build();
            PiError e = ml == null ? Pi.verify(ctx, dl, n) : Pi.verify(ctx, dl, ml, n);
            if (e != null) {
                firstBad = (int) e.blockIndex();
            }
        }
        if (ref && !refByLibrary) {
            for (int k = 0; k < firstBad; k++) {
                int at = tOff + k * tStride;
                int a = u16(tb, at + 2);
                long r = u32(tb, at + 4);
                if (escaped(d, a, r)) {
                    continue;
                }
                if (r != d.refTagOf(first + k)) {
                    firstBad = k;
                    break;
                }
            }
        }
        if (firstBad < n) {
            // the exact per-block verdict for that block; should it pass after all, carry on block by block
            perBlockCheck(latch, mask, d, interval, first, firstBad, n, tb, tOff, tStride, db, dOff, dStride, ob);
        }
    }

    /** The per-block check of blocks [from, n) of a run, stopping at the first failure. */
    private static void perBlockCheck(SigLatch latch, int mask, SigDomain d, int interval, long first, int from, int n,
                                      byte[] tb, int tOff, int tStride, byte[] db, int dOff, int dStride, int ob) {
        Recorder r = new Recorder();
        for (int k = from; k < n && !r.hit; k++) {
            int at = tOff + k * tStride;
            int g = u16(tb, at);
            int computed = (mask & SigAttrs.CHECK_GUARD) != 0 ? guard(d, db, dOff + k * dStride, interval) : g;
            check(r, mask, d, first + k, g, u16(tb, at + 2), u32(tb, at + 4), computed, (first + k) * ob);
        }
        if (r.hit) {
            latch.latch(r.type, r.expected, r.actual, r.offset);
        }
    }

    private static final class Recorder implements SigLatch {
        boolean hit;
        SigErrorType type;
        long expected;
        long actual;
        long offset;

        @Override
        public void latch(SigErrorType t, long e, long a, long o) {
            if (!hit) {
                hit = true;
                type = t;
                expected = e;
                actual = a;
                offset = o;
            }
        }
    }

    private static boolean escaped(SigDomain d, int app, long ref) {
        return d.appEscape && app == 0xFFFF && (!d.refEscape || ref == 0xFFFFFFFFL);
    }

    /** Whether the library can carry this domain's run: a format-sized interval and 16-bit app fields. */
    private static boolean batchable(int interval, SigDomain d) {
        if (interval < BlockFormat.MIN_DATA_SIZE || interval > BlockFormat.MAX_DATA_SIZE
                || Integer.bitCount(interval) != 1) {
            return false;
        }
        return !d.isDif() || ((d.appTag & ~0xFFFF) == 0 && (d.apptagCheckMask & ~0xFFFF) == 0);
    }

    private static BlockFormat format(SigDomain d, int interval, PiType type) {
        return BlockFormat.of(interval, DIF, d.bgType == DifGuard.CRC ? GuardType.CRC16 : GuardType.IP_CHECKSUM,
                type, PiLocation.FIRST);
    }

    /** The context that generates this domain's tuples for blocks from {@code first}: Type 1 increments, Type 3 keeps the tag. */
    private static PiContext generateContext(SigDomain d, int interval, long first) {
        return PiContext.builder(format(d, interval, d.refRemap ? PiType.TYPE_1 : PiType.TYPE_3))
                .initialRefTag(d.refTagOf(first))
                .appTag(d.appTag)
                .guardSeed(d.bg & 0xFFFF)
                .build();
    }

    /** Copies the fields equal in both domains from one tuple to another (mlx5's copy mask). */
    private static void copyFields(byte[] from, int f, byte[] to, int t, boolean guard, boolean app, boolean ref) {
        if (guard) {
            to[t] = from[f];
            to[t + 1] = from[f + 1];
        }
        if (app) {
            to[t + 2] = from[f + 2];
            to[t + 3] = from[f + 3];
        }
        if (ref) {
            System.arraycopy(from, f + 4, to, t + 4, 4);
        }
    }

    private byte[] tuples(int n) {
        if (tuples.length < n * DIF) {
            tuples = new byte[Math.max(n * DIF, tuples.length * 2)];
        }
        return tuples;
    }

    // ---------------------------------------------------------------- block by block

    static String perBlockMemoryToWire(SigLatch mr, SigAttrs a, MemView data, MemView meta, long offset, byte[] dst,
                                       int pos, int len) {
        SigDomain mem = a.mem;
        SigDomain wire = a.wire;
        int interval = interval(a);
        int wb = wireBlock(a);
        byte[] t = new byte[DIF];
        long first = offset / wb;
        int n = len / wb;
        for (int k = 0; k < n; k++) {
            long b = first + k;
            int p = pos + k * wb;
            data.read(b * interval, dst, p, interval);
            int guardM = 0;
            int appM = 0;
            long refM = 0;
            if (mem.isDif()) {
                meta.read(b * DIF, t, 0, DIF);
                guardM = u16(t, 0);
                appM = u16(t, 2);
                refM = u32(t, 4);
                int computed = a.checksGuard() ? guard(mem, dst, p, interval) : guardM;
                check(mr, a.checkMask, mem, b, guardM, appM, refM, computed, b * (interval + DIF));
            }
            if (wire.isDif()) {
                int g = sameGuard(mem, wire) ? guardM : guard(wire, dst, p, interval);
                int app = sameApp(mem, wire) ? appM : wire.appTag;
                long ref = sameRef(mem, wire) ? refM : wire.refTagOf(b);
                putTuple(dst, p + interval, g, app, ref);
            }
        }
        return null;
    }

    static String perBlockWireToMemory(SigLatch mr, SigAttrs a, MemView data, MemView meta, long offset, byte[] src,
                                       int pos, int len) {
        SigDomain mem = a.mem;
        SigDomain wire = a.wire;
        int interval = interval(a);
        int wb = wireBlock(a);
        byte[] t = new byte[DIF];
        long first = offset / wb;
        int n = len / wb;
        for (int k = 0; k < n; k++) {
            long b = first + k;
            int p = pos + k * wb;
            data.write(b * interval, src, p, interval);
            int guardW = 0;
            int appW = 0;
            long refW = 0;
            if (wire.isDif()) {
                int tp = p + interval;
                guardW = u16(src, tp);
                appW = u16(src, tp + 2);
                refW = u32(src, tp + 4);
                int computed = a.checksGuard() ? guard(wire, src, p, interval) : guardW;
                check(mr, a.checkMask, wire, b, guardW, appW, refW, computed, b * (interval + DIF));
            }
            if (mem.isDif()) {
                int g = sameGuard(mem, wire) ? guardW : guard(mem, src, p, interval);
                int app = sameApp(mem, wire) ? appW : mem.appTag;
                long ref = sameRef(mem, wire) ? refW : mem.refTagOf(b);
                putTuple(t, 0, g, app, ref);
                meta.write(b * DIF, t, 0, DIF);
            }
        }
        return null;
    }

    /**
     * Checks one tuple of domain {@code d}; latches the first failure at {@code wireOffset}, the
     * block's offset in the interleaved stream (block × (interval + 8)) whichever domain has the PI.
     */
    static void check(SigLatch mr, int mask, SigDomain d, long block, int guard, int app, long ref,
                      int computedGuard, long wireOffset) {
        if (escaped(d, app, ref)) {
            return;
        }
        if ((mask & SigAttrs.CHECK_GUARD) != 0 && guard != computedGuard) {
            mr.latch(SigErrorType.BAD_GUARD, computedGuard, guard, wireOffset);
            return;
        }
        long expectedRef = d.refTagOf(block);
        if ((mask & SigAttrs.CHECK_REFTAG) != 0 && ref != expectedRef) {
            mr.latch(SigErrorType.BAD_REFTAG, expectedRef, ref, wireOffset);
            return;
        }
        int m = d.apptagCheckMask;
        if ((mask & SigAttrs.CHECK_APPTAG) != 0 && (app & m) != (d.appTag & m)) {
            // mlx5 reports the raw 16-bit tags (trans_sig & 0xffff), not the masked ones
            mr.latch(SigErrorType.BAD_APPTAG, d.appTag & 0xFFFF, app, wireOffset);
        }
    }

    static int guard(SigDomain d, byte[] b, int off, int len) {
        GuardType g = d.bgType == DifGuard.CRC ? GuardType.CRC16 : GuardType.IP_CHECKSUM;
        if (d.bg == 0) {
            return (int) g.compute(b, off, len);
        }
        return (int) g.compute(ByteBuffer.wrap(b, off, len), d.bg & 0xFFFF);
    }

    private static int u16(byte[] b, int at) {
        return ((b[at] & 0xFF) << 8) | (b[at + 1] & 0xFF);
    }

    private static long u32(byte[] b, int at) {
        return ((long) (b[at] & 0xFF) << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8)
                | (b[at + 3] & 0xFF);
    }

    private static void putTuple(byte[] b, int at, int guard, int app, long ref) {
        b[at] = (byte) (guard >>> 8);
        b[at + 1] = (byte) guard;
        b[at + 2] = (byte) (app >>> 8);
        b[at + 3] = (byte) app;
        b[at + 4] = (byte) (ref >>> 24);
        b[at + 5] = (byte) (ref >>> 16);
        b[at + 6] = (byte) (ref >>> 8);
        b[at + 7] = (byte) ref;
    }
}
