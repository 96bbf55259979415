package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.Fx.Layout;
import io.pistore.integrity.reference.ReferencePi;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** verifyAll reports every bad block in block order, one error per block, and honours maxErrors. */
class VerifyAllTest {
    private static final int N = 8;

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (BlockFormat f : new BlockFormat[] {
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
                BlockFormat.of(512, 16, GuardType.IP_CHECKSUM, PiType.TYPE_2, PiLocation.LAST),
                BlockFormat.of(4096, 64, GuardType.CRC64, PiType.TYPE_1, PiLocation.LAST),
                BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_2, PiLocation.FIRST)}) {
            for (Layout l : Layout.values()) {
                out.add(Arguments.of(f, l));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void everyBadBlockInOrder(BlockFormat f, Layout l) {
        PiContext c = Fx.ctx(f);
        byte[] b = Fx.protectedBlocks(c, N, new Random(3));
        Fx.breakGuard(c, b, 1);
        Fx.setApp(c, b, 3, 0x99);
        Fx.setRef(c, b, 4, 5);
        Fx.flipData(c, b, 6);
        Fx.setRef(c, b, 6, 6); // two bad fields in one block: one error, the guard (checked first)
        Fx.breakGuard(c, b, 7);
        Fx.setApp(c, b, 7, 0xFFFF); // escaped: not reported
        List<PiError> all = l.verifyAll(c, b, N, N);
        assertEquals(ReferencePi.verifyAll(c, b, N, N), all);
        assertEquals(List.of(1L, 3L, 4L, 6L), all.stream().map(PiError::blockIndex).toList());
        assertEquals(List.of(PiErrorKind.GUARD, PiErrorKind.APP_TAG, PiErrorKind.REF_TAG, PiErrorKind.GUARD),
                all.stream().map(PiError::kind).toList());
        assertEquals(new PiError(PiErrorKind.APP_TAG, 3, 0x22, 0x99), all.get(1));
        assertEquals(new PiError(PiErrorKind.REF_TAG, 4, 26, 5), all.get(2));
        for (int max = 1; max <= 5; max++) {
            assertEquals(all.subList(0, Math.min(max, all.size())), l.verifyAll(c, b, N, max), "maxErrors " + max);
        }
        assertEquals(all.get(0), l.verify(c, b, N));
        // only part of the blocks: errors beyond nblocks are not seen
        assertEquals(all.subList(0, 2), l.verifyAll(c, b, 4, N));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void maxErrorsMustBePositive(BlockFormat f, Layout l) {
        PiContext c = Fx.ctx(f);
        byte[] b = Fx.protectedBlocks(c, 2, new Random(5));
        for (int max : new int[] {0, -1}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> l.verifyAll(c, b, 2, max));
            assertTrue(e.getMessage().contains("maxErrors"), e.getMessage());
        }
    }
}
