package io.pistore.transport.rdma.verbs.soft;

import io.pistore.integrity.GuardType;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigDomain;
import io.pistore.transport.rdma.verbs.SigErrorType;
import java.nio.ByteBuffer;

/**
 * THE PER-BLOCK SIGNATURE ENGINE AS IT WAS before the batched one, kept as the reference the batched
 * engine is cross-checked against. Changed since, with the engine: the latch type; error offsets
 * are block × (interval + 8) whichever domain carries the PI; app-tag errors report the raw tags.
 *
 * <p>The soft NIC's signature engine: moves blocks between an integrity MR's memory domain (data list
 * plus separate 8-byte-per-interval metadata list) and its wire domain (data, interleaved with 8-byte
 * T10-DIF tuples when the wire carries PI), as the mlx5 strided signature segment does.
 *
 * <p>Per block, the domain the PI comes from is checked (guard, then ref tag, then app tag: mlx5's
 * syndrome priority), under the check mask, the escapes and the app-tag mask; the first failure of
 * the registration is latched on the MR with the block's byte offset in the interleaved stream, and the
 * transfer goes on and succeeds. The PI of the other domain is then produced: fields equal in both
 * domains are copied (mlx5's copy mask), others regenerated from that domain (guard conversion
 * between CRC and IP checksum, ref-tag remapping); a domain without PI gets none (strip), a domain
 * with PI fed from one without gets fresh PI (insert). Guards come from the integrity library's
 * algorithms.
 *
 * <p>A transfer through an integrity MR that carries PI must cover whole wire blocks.
 */
final class ReferenceSignatureEngine {
    private ReferenceSignatureEngine() {
    }

    static String memoryToWire(SigLatch mr, SigAttrs a, MemView data, MemView meta, long offset, byte[] dst,
                               int pos, int len) {
        SigDomain mem = a.mem;
        SigDomain wire = a.wire;
        if (!mem.isDif() && !wire.isDif()) {
            data.read(offset, dst, pos, len);
            return null;
        }
        int interval = mem.isDif() ? mem.piInterval : wire.piInterval;
        int wb = interval + (wire.isDif() ? SigAttrs.DIF_SIZE : 0);
        if (offset % wb != 0 || len % wb != 0) {
            return "transfer [" + offset + ", +" + len + ") does not cover whole blocks of " + wb + " wire bytes";
        }
        byte[] t = new byte[SigAttrs.DIF_SIZE];
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
                meta.read(b * SigAttrs.DIF_SIZE, t, 0, SigAttrs.DIF_SIZE);
                guardM = u16(t, 0);
                appM = u16(t, 2);
                refM = u32(t, 4);
                int computed = a.checksGuard() ? guard(mem, dst, p, interval) : guardM;
                check(mr, a.checkMask, mem, b, guardM, appM, refM, computed, b * (interval + SigAttrs.DIF_SIZE));
            }
            if (wire.isDif()) {
                int g;
                int app;
                long ref;
                if (mem.isDif()) {
                    g = mem.bgType == wire.bgType && mem.bg == wire.bg ? guardM : guard(wire, dst, p, interval);
                    app = mem.appTag == wire.appTag ? appM : wire.appTag;
                    ref = mem.refTag == wire.refTag && mem.refRemap == wire.refRemap ? refM : wire.refTagOf(b);
                } else {
                    g = guard(wire, dst, p, interval);
                    app = wire.appTag;
                    ref = wire.refTagOf(b);
                }
                putTuple(dst, p + interval, g, app, ref);
            }
        }
        return null;
    }

    static String wireToMemory(SigLatch mr, SigAttrs a, MemView data, MemView meta, long offset, byte[] src,
                               int pos, int len) {
        SigDomain mem = a.mem;
        SigDomain wire = a.wire;
        if (!mem.isDif() && !wire.isDif()) {
            data.write(offset, src, pos, len);
            return null;
        }
        int interval = mem.isDif() ? mem.piInterval : wire.piInterval;
        int wb = interval + (wire.isDif() ? SigAttrs.DIF_SIZE : 0);
        if (offset % wb != 0 || len % wb != 0) {
            return "transfer [" + offset + ", +" + len + ") does not cover whole blocks of " + wb + " wire bytes";
        }
        byte[] t = new byte[SigAttrs.DIF_SIZE];
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
                check(mr, a.checkMask, wire, b, guardW, appW, refW, computed, b * (interval + SigAttrs.DIF_SIZE));
            }
            if (mem.isDif()) {
                int g;
                int app;
                long ref;
                if (wire.isDif()) {
                    g = mem.bgType == wire.bgType && mem.bg == wire.bg ? guardW : guard(mem, src, p, interval);
                    app = mem.appTag == wire.appTag ? appW : mem.appTag;
                    ref = mem.refTag == wire.refTag && mem.refRemap == wire.refRemap ? refW : mem.refTagOf(b);
                } else {
                    g = guard(mem, src, p, interval);
                    app = mem.appTag;
                    ref = mem.refTagOf(b);
                }
                putTuple(t, 0, g, app, ref);
                meta.write(b * SigAttrs.DIF_SIZE, t, 0, SigAttrs.DIF_SIZE);
            }
        }
        return null;
    }

    /** Checks one tuple of domain {@code d}; latches the first failure at {@code wireOffset}. */
    static void check(SigLatch mr, int mask, SigDomain d, long block, int guard, int app, long ref,
                      int computedGuard, long wireOffset) {
        if (d.appEscape && app == 0xFFFF && (!d.refEscape || ref == 0xFFFFFFFFL)) {
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
