package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pistore.integrity.TestLists.Built;
import io.pistore.integrity.TestLists.Kind;
import io.pistore.integrity.reference.ReferencePi;
import java.util.Random;

/**
 * One geometry case run end to end against {@link ReferencePi}: generate through a scatter list cut
 * at given offsets (writable kinds), verify the good blocks (every kind), then corrupt each field of
 * one block and compare the first error with the reference. A {@link Case} holds the reference
 * results so that many cut patterns can share them.
 */
final class GeometryCheck {
    private GeometryCheck() {
    }

    /** Field corruptions applied to the interleaved image. */
    enum Corruption { DATA, GUARD, APP, REF, MD_PREFIX }

    static byte[] corrupt(PiContext c, byte[] good, int block, Corruption what) {
        byte[] bad = good.clone();
        switch (what) {
            case DATA: Fx.flipData(c, bad, block); break;
            case GUARD: Fx.breakGuard(c, bad, block); break;
            case APP: Fx.setApp(c, bad, block, Fx.app(c, bad, block) ^ 0x0100); break;
            case REF: Fx.setRef(c, bad, block, Fx.ref(c, bad, block) ^ 0x10); break;
            default:
                int prefix = ReferencePi.tupleOffset(c);
                if (prefix == 0) {
                    return null;
                }
                bad[block * Fx.bs(c) + c.format().dataSize() + prefix - 1] ^= 0x01;
                break;
        }
        return bad;
    }

    /** Random blocks, their reference PI, one corrupted image per field and the reference's verdicts. */
    static final class Case {
        final PiContext c;
        final int n;
        final byte[] raw;
        final byte[] want;
        final int block;
        final byte[][] bad = new byte[Corruption.values().length][];
        final PiError[] refError = new PiError[Corruption.values().length];

        Case(PiContext c, int n, long seed) {
            this.c = c;
            this.n = n;
            Random r = new Random(seed);
            raw = Fx.randomBlocks(c, n, r);
            want = raw.clone();
            ReferencePi.generate(c, want, n);
            block = r.nextInt(n);
            for (Corruption what : Corruption.values()) {
                byte[] b = corrupt(c, want, block, what);
                bad[what.ordinal()] = b;
                if (b != null) {
                    refError[what.ordinal()] = ReferencePi.verify(c, b, n);
                    byte[][] dm = Fx.separate(c, b, n);
                    assertEquals(refError[what.ordinal()], ReferencePi.verify(c, dm[0], dm[1], n),
                            "the reference disagrees with itself between layouts");
                }
            }
        }

        private void mustFind(Corruption what, PiError e) {
            if (c.checks().guard() && what != Corruption.APP && what != Corruption.REF) {
                assertNotNull(e, what + " in block " + block + " must be found");
            }
        }

        void interleaved(Kind kind, int... cuts) {
            if (!kind.readOnly) {
                Built g = TestLists.split(raw, kind, cuts);
                Pi.generate(c, g.list, n);
                assertArrayEquals(want, g.bytes(), "generate through " + g.segments() + " segments");
                g.assertIntact();
            }
            Built v = TestLists.split(want, kind, cuts);
            assertNull(Pi.verify(c, v.list, n), "good blocks");
            v.assertIntact();
            for (Corruption what : Corruption.values()) {
                byte[] b = bad[what.ordinal()];
                if (b == null) {
                    continue;
                }
                Built bl = TestLists.split(b, kind, cuts);
                PiError e = Pi.verify(c, bl.list, n);
                assertEquals(refError[what.ordinal()], e, what + " in block " + block);
                mustFind(what, e);
                assertArrayEquals(b, bl.bytes(), "verify wrote to its input");
            }
        }

        void separate(Kind kind, int[] dataCuts, int[] mdCuts) {
            if (!kind.readOnly) {
                byte[][] rawDm = Fx.separate(c, raw, n);
                byte[][] wantDm = Fx.separate(c, want, n);
                Built d = TestLists.split(rawDm[0], kind, dataCuts);
                Built m = TestLists.split(rawDm[1], kind, mdCuts);
                Pi.generate(c, d.list, m.list, n);
                assertArrayEquals(wantDm[0], d.bytes(), "generate changed the data");
                assertArrayEquals(wantDm[1], m.bytes(), "generated metadata");
                d.assertIntact();
                m.assertIntact();
            }
            byte[][] wantDm = Fx.separate(c, want, n);
            Built d = TestLists.split(wantDm[0], kind, dataCuts);
            Built m = TestLists.split(wantDm[1], kind, mdCuts);
            assertNull(Pi.verify(c, d.list, m.list, n), "good blocks");
            d.assertIntact();
            m.assertIntact();
            for (Corruption what : Corruption.values()) {
                byte[] b = bad[what.ordinal()];
                if (b == null) {
                    continue;
                }
                byte[][] dm = Fx.separate(c, b, n);
                Built bd = TestLists.split(dm[0], kind, dataCuts);
                Built bm = TestLists.split(dm[1], kind, mdCuts);
                PiError e = Pi.verify(c, bd.list, bm.list, n);
                assertEquals(refError[what.ordinal()], e, what + " in block " + block);
                mustFind(what, e);
            }
        }
    }

    static void interleaved(PiContext c, int n, Kind kind, long seed, int... cuts) {
        new Case(c, n, seed).interleaved(kind, cuts);
    }

    static void separate(PiContext c, int n, Kind kind, long seed, int[] dataCuts, int[] mdCuts) {
        new Case(c, n, seed).separate(kind, dataCuts, mdCuts);
    }
}
