package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.integrity.internal.NativeGuards;
import io.pistore.integrity.reference.ReferencePi;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The small public values around the operations: a PI error as a value and as text, the guard path
 * as the process reports it, a running digest, and a guard conversion longer than one run.
 */
class ErrorsPathsAndDigestsTest {

    @Test
    void aPiErrorIsAValueWithItsText() {
        PiError e = new PiError(PiErrorKind.GUARD, 3, 0xBEEF, 0x1234);
        assertEquals("block=3 error=guard expected=0xbeef actual=0x1234", e.toString());
        assertEquals("block=10 error=app expected=0x1 actual=0x2", new PiError(PiErrorKind.APP_TAG, 10, 1, 2).toString());
        assertEquals("ref", PiErrorKind.REF_TAG.shortName());
        PiError moved = e.offsetBy(100);
        assertEquals(103, moved.blockIndex());
        assertEquals(e.kind(), moved.kind());
        assertEquals(e.expected(), moved.expected());
        assertEquals(e.actual(), moved.actual());
        assertEquals(e, new PiError(PiErrorKind.GUARD, 3, 0xBEEF, 0x1234));
        assertEquals(e.hashCode(), new PiError(PiErrorKind.GUARD, 3, 0xBEEF, 0x1234).hashCode());
        assertNotEquals(e, new PiError(PiErrorKind.APP_TAG, 3, 0xBEEF, 0x1234));
        assertNotEquals(e, new PiError(PiErrorKind.GUARD, 4, 0xBEEF, 0x1234));
        assertNotEquals(e, new PiError(PiErrorKind.GUARD, 3, 0xBEEE, 0x1234));
        assertNotEquals(e, new PiError(PiErrorKind.GUARD, 3, 0xBEEF, 0x1235));
        assertNotEquals(e.hashCode(), e.offsetBy(1).hashCode(), "the hash follows the block");
        assertNotEquals(e, "block=3");
        assertEquals("kind", assertThrows(NullPointerException.class, () -> new PiError(null, 0, 0, 0)).getMessage());
    }

    @Test
    void anInjectionSaysWhereItFlipped() {
        Pi.Injection i = Pi.injectError(PiContext.of(BlockFormat.of(512, 8)), ScatterList.wrap(new byte[520]), 1,
                InjectTarget.APP_TAG, new Random(1));
        assertEquals("Injection{APP_TAG block=0 offset=" + i.byteOffset() + " bit=" + i.bit() + "}", i.toString());
    }

    @Test
    void theGuardPathIsTheOneTheLibraryReports() {
        assertEquals(NativeGuards.isAvailable(), GuardPath.isNative());
        assertSame(NativeGuards.unavailabilityCause(), GuardPath.unavailabilityCause());
        assertEquals(NativeGuards.describe(), GuardPath.describe());
        assertEquals(GuardPath.isNative(), GuardPath.unavailabilityCause() == null);
        assertSame(GuardPath.Use.DEFAULT, GuardPath.Use.parse(" Default "));
        assertSame(GuardPath.Use.JAVA, GuardPath.Use.parse("java"));
        assertSame(GuardPath.Use.NATIVE, GuardPath.Use.parse("NATIVE"));
        assertEquals("unknown guard path 'c' (expected default, java or native)",
                assertThrows(IllegalArgumentException.class, () -> GuardPath.Use.parse("c")).getMessage());
    }

    @Test
    void aDigestOfABufferIgnoresItsByteOrderAndChains() {
        byte[] raw = new byte[333];
        new Random(2).nextBytes(raw);
        for (GuardType g : GuardType.values()) {
            GuardDigest d = g.newDigest();
            assertSame(g, d.type());
            ByteBuffer le = ByteBuffer.allocateDirect(200).put(raw, 0, 200).flip().order(ByteOrder.LITTLE_ENDIAN);
            assertSame(d, d.update(le));
            assertEquals(0, le.position());
            assertSame(d, d.update(raw, 200, 133));
            assertEquals(g.compute(raw, 0, raw.length), d.value(), g.toString());
        }
    }

    @Test
    void aConversionLongerThanOneRunConvertsEveryRunAndStopsAtTheFirstBadBlock() {
        int n = 150;
        BlockFormat f = BlockFormat.of(512, 8);
        PiContext from = Fx.ctx(f);
        PiContext into = Fx.ctx(f.withGuard(GuardType.IP_CHECKSUM));
        byte[] good = Fx.protectedBlocks(from, n, new Random(5));
        byte[] want = good.clone();
        ReferencePi.generate(into, want, n);
        byte[] b = good.clone();
        assertNull(Pi.convertGuard(from, ScatterList.wrap(b), n, GuardType.IP_CHECKSUM));
        assertArrayEquals(want, b, "all three runs converted");
        // a bad block in the first run: the walk stops there, later runs keep their old guards
        byte[] bad = good.clone();
        Fx.flipData(from, bad, 10);
        byte[] c = bad.clone();
        PiError e = Pi.convertGuard(from, ScatterList.wrap(c), n, GuardType.IP_CHECKSUM);
        assertEquals(10, e.blockIndex());
        assertEquals(PiErrorKind.GUARD, e.kind());
        for (int i = 0; i < n; i++) {
            assertArrayEquals(ReferencePi.tupleOf(from, i < 10 ? want : bad, i), ReferencePi.tupleOf(from, c, i),
                    "block " + i);
        }
    }
}
