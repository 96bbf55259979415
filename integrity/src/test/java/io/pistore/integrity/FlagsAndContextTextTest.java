package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * Check flags in each of their forms (booleans, bits, text) and a context moved along an I/O: the
 * eight combinations round-trip, and the text forms are the ones tools print.
 */
class FlagsAndContextTextTest {

    @Test
    void everyCombinationHasOneValueInEveryForm() {
        for (int bits = 0; bits < 8; bits++) {
            boolean g = (bits & 1) != 0;
            boolean a = (bits & 2) != 0;
            boolean r = (bits & 4) != 0;
            CheckFlags f = CheckFlags.of(g, a, r);
            assertSame(f, CheckFlags.fromBits(bits));
            assertEquals(bits, f.bits());
            assertEquals(g, f.guard());
            assertEquals(a, f.app());
            assertEquals(r, f.ref());
            assertEquals(bits == 0, f.isNone());
            assertSame(f, CheckFlags.parse(f.toString()), f.toString());
        }
        assertEquals("none", CheckFlags.NONE.toString());
        assertEquals("guard,app,ref", CheckFlags.ALL.toString());
        assertEquals("app,ref", CheckFlags.of(false, true, true).toString());
        assertEquals("guard", CheckFlags.GUARD.toString());
        assertEquals("ref", CheckFlags.REF.toString());
    }

    @Test
    void checkFlagsParseListsAllAndNone() {
        assertSame(CheckFlags.ALL, CheckFlags.parse(" ALL "));
        assertSame(CheckFlags.NONE, CheckFlags.parse("none"));
        assertSame(CheckFlags.NONE, CheckFlags.parse("  "));
        assertSame(CheckFlags.of(true, false, true), CheckFlags.parse("ref, guard"));
        assertSame(CheckFlags.APP, CheckFlags.parse("app,app"));
        assertSame(CheckFlags.of(true, true, false), CheckFlags.parse("Guard,APP"));
        assertEquals("unknown check 'crc' (expected guard, app, ref, all or none)",
                assertThrows(IllegalArgumentException.class, () -> CheckFlags.parse("guard,crc")).getMessage());
        assertEquals("check flags must be a combination of 1 (guard), 2 (app), 4 (ref), not 8",
                assertThrows(IllegalArgumentException.class, () -> CheckFlags.fromBits(8)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> CheckFlags.fromBits(-1));
    }

    @Test
    void aContextAdvancedAlongAnIoMovesItsRefTag() {
        PiContext c = PiContext.builder(BlockFormat.of(512, 8)).initialRefTag(0xFFFF_FFFEL).appTag(0x12).build();
        assertSame(c, c.advancedBy(0));
        PiContext on = c.advancedBy(3);
        assertEquals(1, on.initialRefTag(), "32-bit tags roll over");
        assertEquals(0x12, on.appTag());
        assertEquals(c.checks(), on.checks());
        assertEquals(c.refTag(5), on.refTag(2));
        PiContext t3 = PiContext.builder(BlockFormat.of(512, 8).withType(PiType.TYPE_3)).initialRefTag(9).build();
        assertSame(t3, t3.advancedBy(4), "Type 3 keeps its constant tag");
        assertEquals(9, t3.refTag(100));
    }

    @Test
    void aContextPrintsItsFieldsAndAPathOnlyWhenChosen() {
        BlockFormat f = BlockFormat.of(4096, 8);
        PiContext c = PiContext.builder(f).checks(CheckFlags.of(true, false, true)).initialRefTag(0x2A).appTag(0xBEEF)
                .appMask(0xFF00).guardSeed(0x11).build();
        assertEquals("PiContext{4096+8 type=1 guard=crc16 pi=first, checks=guard,ref, ref=0x2a, app=0xbeef/0xff00,"
                + " seed=0x11}", c.toString());
        PiContext java = c.toBuilder().guardPath(GuardPath.Use.JAVA).build();
        assertEquals("PiContext{4096+8 type=1 guard=crc16 pi=first, checks=guard,ref, ref=0x2a, app=0xbeef/0xff00,"
                + " seed=0x11, path=JAVA}", java.toString());
    }
}
