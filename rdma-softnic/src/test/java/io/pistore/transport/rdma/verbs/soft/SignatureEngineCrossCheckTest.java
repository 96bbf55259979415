package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.ScatterList;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigDomain;
import io.pistore.transport.rdma.verbs.SigErrorType;
import io.pistore.transport.rdma.verbs.SigType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The batched signature engine against the per-block one it replaced ({@link ReferenceSignatureEngine}):
 * random intervals, domain pairs (insert, strip, pass, guard conversion, ref remap, escapes, app
 * masks, guard seeds, check masks), scatter lists cut anywhere (heap and direct), transfers starting
 * and ending on any block, and corruption at random bytes of data and tuples. Both must latch the
 * same first error (type, expected, actual, wire offset) and produce the same bytes.
 */
class SignatureEngineCrossCheckTest {
    private static final int DIF = SigAttrs.DIF_SIZE;

    /** The first latched error, as an MR keeps it. */
    static final class First implements SigLatch {
        SigErrorType type;
        long expected;
        long actual;
        long offset = -1;

        @Override
        public void latch(SigErrorType t, long e, long a, long o) {
            if (type == null) {
                type = t;
                expected = e;
                actual = a;
                offset = o;
            }
        }

        @Override
        public String toString() {
            return type == null ? "none" : type + " expected=0x" + Long.toHexString(expected) + " actual=0x"
                    + Long.toHexString(actual) + " @" + offset;
        }
    }

    static void randomDomain(Random r, SigDomain d, int interval) {
        d.clear();
        d.sigType = SigType.T10_DIF;
        d.bgType = r.nextBoolean() ? DifGuard.CRC : DifGuard.CSUM;
        d.piInterval = interval;
        d.bg = r.nextInt(5) == 0 ? r.nextInt(0x10000) : 0;
        d.appTag = r.nextInt(6) == 0 ? 0xFFFF : r.nextInt(0x10000);
        d.refTag = r.nextInt(6) == 0 ? 0xFFFFFFF0L + r.nextInt(16) : r.nextInt() & 0xFFFFFFFFL;
        d.refRemap = r.nextBoolean();
        d.appEscape = r.nextInt(4) != 0;
        d.refEscape = r.nextBoolean();
        int[] masks = {0xFFFF, 0xFFFF, 0x00FF, 0xF0F0, 0};
        d.apptagCheckMask = masks[r.nextInt(masks.length)];
    }

    /** A list over {@code a} cut into random pieces, some of them direct buffers (copied back by {@link #back}). */
    static final class Cut {
        final byte[] a;
        final List<ByteBuffer> parts = new ArrayList<>();
        final ScatterList list;

        Cut(byte[] a, Random r) {
            this.a = a;
            int at = 0;
            while (at < a.length) {
                int n = Math.min(a.length - at, 1 + r.nextInt(Math.max(1, a.length / 3)));
                ByteBuffer b = r.nextBoolean() ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
                b.put(a, at, n).flip();
                parts.add(b);
                at += n;
            }
            list = a.length == 0 ? ScatterList.of() : ScatterList.of(parts.toArray(new ByteBuffer[0]));
        }

        byte[] back() {
            byte[] out = new byte[a.length];
            int at = 0;
            for (ByteBuffer b : parts) {
                b.get(0, out, at, b.limit());
                at += b.limit();
            }
            return out;
        }
    }

    /** Correct PI of domain {@code d} for data block {@code b}, as the engine computes it. */
    static void tuple(SigDomain d, byte[] data, int dOff, int interval, long b, byte[] out, int at) {
        int g = SignatureEngine.guard(d, data, dOff, interval);
        long ref = d.refTagOf(b);
        out[at] = (byte) (g >>> 8);
        out[at + 1] = (byte) g;
        out[at + 2] = (byte) (d.appTag >>> 8);
        out[at + 3] = (byte) d.appTag;
        out[at + 4] = (byte) (ref >>> 24);
        out[at + 5] = (byte) (ref >>> 16);
        out[at + 6] = (byte) (ref >>> 8);
        out[at + 7] = (byte) ref;
    }

    /** Corrupts a few random bytes among the run's blocks (data or tuple), sometimes writes escape values. */
    static void corrupt(Random r, byte[] buf, int off, int blocks, int stride, int interval, int tupleOffset,
                        int tupleStride) {
        int k = r.nextInt(4);
        for (int i = 0; i < k; i++) {
            int b = r.nextInt(blocks);
            switch (r.nextInt(5)) {
                case 0, 1 -> buf[off + b * stride + r.nextInt(interval)] ^= (byte) (1 << r.nextInt(8));
                case 2 -> buf[tupleOffset + b * tupleStride + r.nextInt(DIF)] ^= (byte) (1 << r.nextInt(8));
                case 3 -> {
                    buf[tupleOffset + b * tupleStride + 2] = (byte) 0xFF;
                    buf[tupleOffset + b * tupleStride + 3] = (byte) 0xFF;
                    if (r.nextBoolean()) {
                        for (int j = 4; j < 8; j++) buf[tupleOffset + b * tupleStride + j] = (byte) 0xFF;
                    }
                }
                default -> buf[tupleOffset + b * tupleStride + 4 + r.nextInt(4)] ^= 1;
            }
        }
    }

    static int checkMask(Random r) {
        int m = 0;
        if (r.nextInt(5) != 0) m |= SigAttrs.CHECK_GUARD;
        if (r.nextBoolean()) m |= SigAttrs.CHECK_APPTAG;
        if (r.nextBoolean()) m |= SigAttrs.CHECK_REFTAG;
        return m;
    }

    static SigAttrs attrs(Random r, int interval) {
        SigAttrs a = new SigAttrs();
        int shape = r.nextInt(3); // 0 pass (both), 1 memory only, 2 wire only
        if (shape != 2) randomDomain(r, a.mem, interval);
        if (shape != 1) randomDomain(r, a.wire, interval);
        if (shape == 0 && r.nextBoolean()) {
            // mostly-equal domains, as the transport's pass requests: copy, then vary one field
            a.wire.copyFrom(a.mem);
            switch (r.nextInt(4)) {
                case 0 -> a.wire.bgType = a.mem.bgType == DifGuard.CRC ? DifGuard.CSUM : DifGuard.CRC;
                case 1 -> a.wire.refTag = r.nextInt() & 0xFFFFFFFFL;
                case 2 -> a.wire.appTag = r.nextInt(0x10000);
                default -> { }
            }
        }
        a.checkMask = checkMask(r);
        return a;
    }

    @Test
    void batchedAndPerBlockEnginesAgreeOnRandomTransfers() {
        Random r = new Random(0x51C5EED);
        int[] intervals = {512, 512, 1024, 4096, 520};
        SignatureEngine engine = new SignatureEngine(1); // batch every transfer the library can carry
        SignatureEngine usual = new SignatureEngine();   // the NIC's engine: batches from 8 blocks
        int errors = 0;
        int cases = 4000;
        for (int c = 0; c < cases; c++) {
            int interval = intervals[r.nextInt(intervals.length)];
            SigAttrs a = attrs(r, interval);
            int blocks = 1 + r.nextInt(r.nextBoolean() ? 12 : 24);
            int wb = interval + (a.wire.isDif() ? DIF : 0);
            int from = r.nextInt(blocks);
            int count = 1 + r.nextInt(blocks - from);
            String where = "case " + c + " interval " + interval + " " + a + " blocks " + from + "+" + count;
            boolean out = r.nextBoolean();
            First ref = new First();
            First got = new First();
            if (out) {
                // memory -> wire: memory holds data + (mem PI, correct then corrupted)
                byte[] data = new byte[blocks * interval];
                r.nextBytes(data);
                byte[] meta = new byte[a.mem.isDif() ? blocks * DIF : 0];
                if (a.mem.isDif()) {
                    for (int b = 0; b < blocks; b++) tuple(a.mem, data, b * interval, interval, b, meta, b * DIF);
                    byte[] both = new byte[data.length + meta.length];
                    System.arraycopy(data, 0, both, 0, data.length);
                    System.arraycopy(meta, 0, both, data.length, meta.length);
                    corrupt(r, both, 0, blocks, interval, interval, data.length, DIF);
                    System.arraycopy(both, 0, data, 0, data.length);
                    System.arraycopy(both, data.length, meta, 0, meta.length);
                }
                byte[] dstRef = new byte[count * wb + 7];
                byte[] dstNew = new byte[count * wb + 7];
                MemView dv = new MemView(new Cut(data, r).list);
                MemView mv = meta.length == 0 ? MemView.EMPTY : new MemView(new Cut(meta, r).list);
                assertNull(ReferenceSignatureEngine.memoryToWire(ref, a, dv, mv, (long) from * wb, dstRef, 3, count * wb));
                assertNull(engine.memoryToWire(got, a, dv, mv, (long) from * wb, dstNew, 3, count * wb));
                assertArrayEquals(dstRef, dstNew, where + ": wire bytes");
                byte[] dstUsual = new byte[count * wb + 7];
                First usualGot = new First();
                assertNull(usual.memoryToWire(usualGot, a, dv, mv, (long) from * wb, dstUsual, 3, count * wb));
                assertArrayEquals(dstRef, dstUsual, where + ": wire bytes (usual engine)");
                assertEquals(ref.toString(), usualGot.toString(), where + ": latched error (usual engine)");
            } else {
                // wire -> memory: the wire holds data + (wire PI, correct then corrupted)
                byte[] wire = new byte[blocks * wb];
                byte[] plain = new byte[interval];
                for (int b = 0; b < blocks; b++) {
                    r.nextBytes(plain);
                    System.arraycopy(plain, 0, wire, b * wb, interval);
                    if (a.wire.isDif()) tuple(a.wire, wire, b * wb, interval, b, wire, b * wb + interval);
                }
                if (a.wire.isDif()) corrupt(r, wire, 0, blocks, wb, interval, interval, wb);
                byte[] memRef = new byte[blocks * interval];
                byte[] metaRef = new byte[a.mem.isDif() ? blocks * DIF : 0];
                r.nextBytes(memRef);
                r.nextBytes(metaRef);
                Cut dRef = new Cut(memRef, r);
                Cut mRef = new Cut(metaRef, r);
                Cut dNew = new Cut(memRef.clone(), r);
                Cut mNew = new Cut(metaRef.clone(), r);
                byte[] src = new byte[count * wb + 5];
                System.arraycopy(wire, from * wb, src, 5, count * wb);
                byte[] srcCopy = src.clone();
                assertNull(ReferenceSignatureEngine.wireToMemory(ref, a, new MemView(dRef.list),
                        metaRef.length == 0 ? MemView.EMPTY : new MemView(mRef.list), (long) from * wb, src, 5, count * wb));
                assertNull(engine.wireToMemory(got, a, new MemView(dNew.list),
                        metaRef.length == 0 ? MemView.EMPTY : new MemView(mNew.list), (long) from * wb, src, 5, count * wb));
                assertArrayEquals(srcCopy, src, where + ": the wire payload is not written");
                assertArrayEquals(dRef.back(), dNew.back(), where + ": memory data");
                assertArrayEquals(mRef.back(), mNew.back(), where + ": memory metadata");
            }
            assertEquals(ref.toString(), got.toString(), where + ": latched error");
            if (ref.type != null) {
                errors++;
            }
        }
        assertTrue(errors > cases / 10, "enough transfers failed a check to compare the latching: " + errors);
        assertTrue(engine.batched > cases / 2, "the batched path ran: " + engine.batched + " batched, "
                + engine.perBlock + " block by block");
        assertTrue(engine.perBlock > 0, "520-byte intervals ran block by block");
        assertTrue(usual.batched > 0 && usual.perBlock > 0, "the usual engine batched long transfers only: "
                + usual.batched + " batched, " + usual.perBlock + " block by block");
    }
}
