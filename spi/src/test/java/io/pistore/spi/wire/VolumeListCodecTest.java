package io.pistore.spi.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The discovery list every network transport carries: round trips, limits, and hostile input. */
class VolumeListCodecTest {
    private static final BlockFormat[] FORMATS = {
        BlockFormat.of(512, 8), BlockFormat.of(4096, 8), BlockFormat.of(4096, 0),
        BlockFormat.of(4096, 16), BlockFormat.of(512, 8).withType(PiType.TYPE_3),
        BlockFormat.of(4096, 8).withGuard(GuardType.IP_CHECKSUM).withType(PiType.TYPE_2),
        BlockFormat.of(4096, 64).withLocation(PiLocation.LAST),
    };

    private static List<VolumeListCodec.Entry> randomList(SplittableRandom r, int n) {
        List<VolumeListCodec.Entry> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            StringBuilder name = new StringBuilder();
            int len = 1 + r.nextInt(VolumeListCodec.MAX_NAME);
            for (int k = 0; k < len; k++) {
                name.append((char) ('a' + r.nextInt(26)));
            }
            l.add(new VolumeListCodec.Entry(r.nextInt(), new VolumeInfo(name.toString(), 1 + (r.nextLong() >>> 2),
                    FORMATS[r.nextInt(FORMATS.length)])));
        }
        return l;
    }

    @Test
    void randomListsRoundTrip() throws Exception {
        SplittableRandom r = new SplittableRandom(11);
        for (int round = 0; round < 200; round++) {
            List<VolumeListCodec.Entry> l = randomList(r, r.nextInt(20));
            byte[] b = VolumeListCodec.encode(l, Integer.MAX_VALUE, 1000);
            assertEquals(l, VolumeListCodec.decode(ByteBuffer.wrap(b), 1000));
        }
    }

    @Test
    void encodingKeepsWhatFitsAndSkipsNamesTooLong() throws Exception {
        SplittableRandom r = new SplittableRandom(12);
        List<VolumeListCodec.Entry> l = randomList(r, 10);
        List<VolumeListCodec.Entry> withLong = new ArrayList<>(l);
        withLong.add(3, new VolumeListCodec.Entry(7, new VolumeInfo("x".repeat(65), 8, FORMATS[0])));
        assertEquals(l, VolumeListCodec.decode(ByteBuffer.wrap(VolumeListCodec.encode(withLong, 1 << 20, 100)), 100));
        // Byte and count limits cut the list; what is kept decodes.
        int firstTwo = 4 + VolumeListCodec.encodedSize(l.get(0).info()) + VolumeListCodec.encodedSize(l.get(1).info());
        assertEquals(l.subList(0, 2), VolumeListCodec.decode(ByteBuffer.wrap(VolumeListCodec.encode(l.subList(0, 2),
                firstTwo, 100)), 100));
        assertEquals(1, VolumeListCodec.decode(ByteBuffer.wrap(VolumeListCodec.encode(l.subList(0, 2), firstTwo - 1,
                100)), 100).size());
        assertEquals(l.subList(0, 3), VolumeListCodec.decode(ByteBuffer.wrap(VolumeListCodec.encode(l, 1 << 20, 3)), 3));
    }

    @Test
    void everyTruncationIsRefusedWithAReason() {
        byte[] b = VolumeListCodec.encode(randomList(new SplittableRandom(13), 4), 1 << 20, 100);
        for (int cut = 0; cut < b.length; cut++) {
            ByteBuffer t = ByteBuffer.wrap(b, 0, cut);
            VolumeListCodec.MalformedListException e = assertThrows(VolumeListCodec.MalformedListException.class,
                    () -> VolumeListCodec.decode(t, 100), "cut at " + cut);
            assertTrue(e.getMessage().startsWith("volume list"), e.getMessage());
        }
    }

    @Test
    void badCodesCountsAndTrailingBytesAreRefused() {
        List<VolumeListCodec.Entry> one = List.of(new VolumeListCodec.Entry(1, new VolumeInfo("v", 8, FORMATS[1])));
        byte[] good = VolumeListCodec.encode(one, 1 << 20, 10);
        int[][] damage = {
            {22, 4}, // guard code past crc64
            {23, 4}, // PI type 4
            {24, 4}, // an unknown flag
            {25, 0}, // empty name
            {25, 65}, // name longer than the limit
        };
        for (int[] d : damage) {
            byte[] b = good.clone();
            b[d[0]] = (byte) d[1];
            assertThrows(VolumeListCodec.MalformedListException.class, () -> VolumeListCodec.decode(ByteBuffer.wrap(b), 10),
                    "byte " + d[0] + " = " + d[1]);
        }
        byte[] blocksZero = good.clone();
        ByteBuffer.wrap(blocksZero).putLong(8, 0);
        assertThrows(VolumeListCodec.MalformedListException.class, () -> VolumeListCodec.decode(ByteBuffer.wrap(blocksZero), 10));
        byte[] trailing = java.util.Arrays.copyOf(good, good.length + 1);
        assertThrows(VolumeListCodec.MalformedListException.class, () -> VolumeListCodec.decode(ByteBuffer.wrap(trailing), 10));
        byte[] huge = good.clone();
        ByteBuffer.wrap(huge).putInt(0, -1);
        assertThrows(VolumeListCodec.MalformedListException.class, () -> VolumeListCodec.decode(ByteBuffer.wrap(huge), 10));
        assertThrows(VolumeListCodec.MalformedListException.class, () -> VolumeListCodec.decode(ByteBuffer.wrap(good), 0));
    }
}
