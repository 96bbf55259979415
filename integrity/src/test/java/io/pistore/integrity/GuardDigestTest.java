package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.reference.ReferenceGuards;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GuardDigestTest {

    @ParameterizedTest
    @EnumSource(GuardType.class)
    void checkValueOf123456789(GuardType g) {
        byte[] b = "123456789".getBytes(StandardCharsets.US_ASCII);
        long want = ReferenceGuards.guard(g, 0, b, 0, b.length);
        assertEquals(want, g.newDigest().update(b, 0, b.length).value());
        switch (g) {
            case CRC16: assertEquals(0xD0DBL, want); break;
            case CRC32C: assertEquals(0xE3069283L, want); break;
            case CRC64: assertEquals(0xAE8B14860A799888L, want); break;
            default: break;
        }
    }

    /** Pieces of every size, odd ones included (the IP checksum carries a half word across them). */
    @ParameterizedTest
    @EnumSource(GuardType.class)
    void piecesGiveTheValueOfTheWhole(GuardType g) {
        Random r = new Random(42);
        byte[] all = new byte[20_000];
        r.nextBytes(all);
        long want = ReferenceGuards.guard(g, 0, all, 0, all.length);
        for (int round = 0; round < 20; round++) {
            GuardDigest heap = g.newDigest();
            GuardDigest direct = g.newDigest();
            int off = 0;
            while (off < all.length) {
                int n = Math.min(all.length - off, r.nextInt(round < 10 ? 7 : 3000) + 1);
                heap.update(ByteBuffer.wrap(all, off, n).order(ByteOrder.LITTLE_ENDIAN));
                ByteBuffer d = ByteBuffer.allocateDirect(n + 3);
                d.position(3);
                d.put(all, off, n);
                d.position(3);
                direct.update(d);
                assertEquals(3, d.position(), "the buffer is not moved");
                off += n;
            }
            assertEquals(want, heap.value(), "heap pieces, round " + round);
            assertEquals(want, direct.value(), "direct pieces, round " + round);
            assertEquals(want, heap.value(), "value() does not end the digest");
        }
    }

    @ParameterizedTest
    @EnumSource(GuardType.class)
    void emptyDigestIsTheGuardOfNothing(GuardType g) {
        assertEquals(g.compute(new byte[0], 0, 0), g.newDigest().value());
    }
}
