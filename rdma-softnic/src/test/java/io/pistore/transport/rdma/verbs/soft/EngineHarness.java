package io.pistore.transport.rdma.verbs.soft;

import io.pistore.integrity.GuardType;
import io.pistore.integrity.ScatterList;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigDomain;
import io.pistore.transport.rdma.verbs.SigErrorType;
import io.pistore.transport.rdma.verbs.SigType;

/**
 * Drives the signature engine directly: domains built field by field, blocks and tuples as arrays,
 * and the first latched error. Each case runs on both engines: the batched one (every transfer it
 * can take) and the per-block one (never batched).
 */
final class EngineHarness {
    /** The first latched error. */
    static final class Latched implements SigLatch {
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

        @Override
        public String toString() {
            return hit ? type + " expected=0x" + Long.toHexString(expected) + " actual=0x" + Long.toHexString(actual)
                    + " offset=" + offset : "none";
        }
    }

    static final SignatureEngine[] ENGINES = {new SignatureEngine(1), new SignatureEngine(Integer.MAX_VALUE)};

    private EngineHarness() {
    }

    /** A T10-DIF domain: CRC guard, app/ref as given, app escape on (Types 1/2), full app mask. */
    static SigDomain dif(SigDomain d, int interval, int app, long ref, boolean remap) {
        d.clear();
        d.sigType = SigType.T10_DIF;
        d.bgType = DifGuard.CRC;
        d.piInterval = interval;
        d.appTag = app;
        d.refTag = ref;
        d.refRemap = remap;
        d.appEscape = true;
        d.apptagCheckMask = 0xFFFF;
        return d;
    }

    static int guard(DifGuard g, byte[] b, int off, int len) {
        return (int) (g == DifGuard.CRC ? GuardType.CRC16 : GuardType.IP_CHECKSUM).compute(b, off, len);
    }

    static void tuple(byte[] b, int at, int guard, int app, long ref) {
        b[at] = (byte) (guard >>> 8);
        b[at + 1] = (byte) guard;
        b[at + 2] = (byte) (app >>> 8);
        b[at + 3] = (byte) app;
        b[at + 4] = (byte) (ref >>> 24);
        b[at + 5] = (byte) (ref >>> 16);
        b[at + 6] = (byte) (ref >>> 8);
        b[at + 7] = (byte) ref;
    }

    static int u16(byte[] b, int at) {
        return ((b[at] & 0xFF) << 8) | (b[at + 1] & 0xFF);
    }

    static long u32(byte[] b, int at) {
        return ((long) (b[at] & 0xFF) << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
    }

    /** A wire stream of n blocks: random-ish data, each tuple correct for domain {@code d}. */
    static byte[] wire(SigDomain d, int n, long seed) {
        int wb = d.piInterval + SigAttrs.DIF_SIZE;
        byte[] w = new byte[n * wb];
        java.util.Random r = new java.util.Random(seed);
        for (int k = 0; k < n; k++) {
            byte[] blk = new byte[d.piInterval];
            r.nextBytes(blk);
            System.arraycopy(blk, 0, w, k * wb, d.piInterval);
            tuple(w, k * wb + d.piInterval, guard(d.bgType, w, k * wb, d.piInterval), d.appTag, d.refTagOf(k));
        }
        return w;
    }

    /** Moves a wire stream into memory (data and separate metadata) through {@code a}; the first error. */
    static Latched wireToMemory(SignatureEngine e, SigAttrs a, byte[] wire, byte[] data, byte[] meta) {
        Latched l = new Latched();
        String bad = e.wireToMemory(l, a, new MemView(ScatterList.wrap(data)),
                meta.length == 0 ? MemView.EMPTY : new MemView(ScatterList.wrap(meta)), 0, wire, 0, wire.length);
        if (bad != null) {
            throw new AssertionError(bad);
        }
        return l;
    }

    /** Moves memory (data and separate metadata) to a wire stream of {@code wireLen} bytes; the first error. */
    static Latched memoryToWire(SignatureEngine e, SigAttrs a, byte[] data, byte[] meta, byte[] wire) {
        Latched l = new Latched();
        String bad = e.memoryToWire(l, a, new MemView(ScatterList.wrap(data)),
                meta.length == 0 ? MemView.EMPTY : new MemView(ScatterList.wrap(meta)), 0, wire, 0, wire.length);
        if (bad != null) {
            throw new AssertionError(bad);
        }
        return l;
    }

    /** Splits an interleaved stream into data and metadata arrays. */
    static byte[][] split(byte[] wire, int interval) {
        int wb = interval + SigAttrs.DIF_SIZE;
        int n = wire.length / wb;
        byte[] d = new byte[n * interval];
        byte[] m = new byte[n * SigAttrs.DIF_SIZE];
        for (int k = 0; k < n; k++) {
            System.arraycopy(wire, k * wb, d, k * interval, interval);
            System.arraycopy(wire, k * wb + interval, m, k * SigAttrs.DIF_SIZE, SigAttrs.DIF_SIZE);
        }
        return new byte[][] {d, m};
    }
}
