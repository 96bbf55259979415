package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link Pi}'s refusals on the paths that do no PI work (a format without PI, no checks asked) and
 * on separate lists, with their messages; and where error injection on separate lists lands.
 */
class PiRefusalsTest {
    private static final BlockFormat T0 = BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST);
    private static final BlockFormat T1 = BlockFormat.of(512, 8);

    private static ScatterList bytes(int n) {
        return ScatterList.wrap(new byte[n]);
    }

    private static String refusal(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void verifyingWithoutPiOrChecksStillNeedsWholeLists() {
        PiContext noPi = PiContext.of(T0);
        PiContext noChecks = PiContext.builder(T1).checks(CheckFlags.NONE).build();
        for (PiContext c : new PiContext[] {noPi, noChecks}) {
            assertEquals("the interleaved list holds 1039 bytes, the operation needs 1040",
                    refusal(() -> Pi.verifyAll(c, bytes(1039), 2, 5)));
            assertEquals("the data list holds 1023 bytes, the operation needs 1024",
                    refusal(() -> Pi.verifyAll(c, bytes(1023), bytes(16), 2, 5)));
            assertEquals("the metadata list holds 15 bytes, the operation needs 16",
                    refusal(() -> Pi.verifyAll(c, bytes(1024), bytes(15), 2, 5)));
            assertEquals("the interleaved list holds 1039 bytes, the operation needs 1040",
                    refusal(() -> Pi.verify(c, bytes(1039), 2)));
            assertEquals("the metadata list holds 15 bytes, the operation needs 16",
                    refusal(() -> Pi.verify(c, bytes(1024), bytes(15), 2)));
            assertEquals(List.of(), Pi.verifyAll(c, bytes(1040), 2, 5));
            assertEquals(List.of(), Pi.verifyAll(c, bytes(1024), bytes(16), 2, 5));
        }
        assertEquals("maxErrors must be at least 1, not 0", refusal(() -> Pi.verifyAll(noPi, bytes(1040), 2, 0)));
        assertEquals("maxErrors must be at least 1, not 0",
                refusal(() -> Pi.verifyAll(noPi, bytes(1024), bytes(16), 2, 0)));
    }

    @Test
    void guardConversionOfSeparateListsNeedsEightByteTuples() {
        BlockFormat c64 = BlockFormat.of(4096, 16);
        assertEquals("guard conversion works between 8-byte tuples (crc16, ip) with PI, not crc64 -> crc16 on " + c64,
                refusal(() -> Pi.convertGuard(PiContext.of(c64), bytes(4096), bytes(16), 1, GuardType.CRC16)));
        assertEquals("guard conversion works between 8-byte tuples (crc16, ip) with PI, not crc16 -> crc64 on " + T1,
                refusal(() -> Pi.convertGuard(PiContext.of(T1), bytes(512), bytes(8), 1, GuardType.CRC64)));
        assertEquals("guard conversion works between 8-byte tuples (crc16, ip) with PI, not crc16 -> ip on " + T0,
                refusal(() -> Pi.convertGuard(PiContext.of(T0), bytes(512), bytes(8), 1, GuardType.IP_CHECKSUM)));
    }

    @Test
    void injectionIntoSeparateListsNeedsPiAndBlocks() {
        byte[] d = new byte[512];
        byte[] m = new byte[8];
        assertEquals("cannot inject a PI error into a format without PI: " + T0, refusal(() -> Pi.injectError(
                PiContext.of(T0), ScatterList.wrap(d), ScatterList.wrap(m), 1, InjectTarget.APP_TAG, new Random(1))));
        assertEquals("need at least one block to inject an error into", refusal(() -> Pi.injectError(
                PiContext.of(T1), ScatterList.wrap(d), ScatterList.wrap(m), 0, InjectTarget.APP_TAG, new Random(1))));
        assertEquals("the metadata list holds 8 bytes, the operation needs 16", refusal(() -> Pi.injectError(
                PiContext.of(T1), bytes(1024), ScatterList.wrap(m), 2, InjectTarget.DATA, new Random(1))));
        assertArrayEquals(new byte[512], d);
        assertArrayEquals(new byte[8], m);
    }

    @Test
    void injectedDataBitsSpreadOverBlocksAndBytes() {
        PiContext c = PiContext.of(T1);
        Random r = new Random(17);
        Set<Long> blocks = new HashSet<>();
        Set<Long> interleavedBytes = new HashSet<>();
        Set<Long> separateBytes = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            Pi.Injection a = Pi.injectError(c, bytes(8 * 520), 8, InjectTarget.DATA, r);
            assertEquals(a.blockIndex(), a.byteOffset() / 520);
            assertTrue(a.byteOffset() % 520 < 512, "in the data of its block: " + a);
            interleavedBytes.add(a.byteOffset() % 520);
            Pi.Injection b = Pi.injectError(c, bytes(8 * 512), bytes(8 * 8), 8, InjectTarget.DATA, r);
            assertEquals(b.blockIndex(), b.byteOffset() / 512);
            blocks.add(b.blockIndex());
            separateBytes.add(b.byteOffset() % 512);
        }
        assertEquals(8, blocks.size(), "every block of the separate lists is chosen sometimes");
        assertTrue(interleavedBytes.size() > 100, "data bytes chosen: " + interleavedBytes.size());
        assertTrue(separateBytes.size() > 100, "data bytes chosen: " + separateBytes.size());
    }
}
