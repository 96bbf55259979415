package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.reference.ReferencePi;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Lists shorter than the operation needs are an IllegalArgumentException before anything is written;
 * Type 0 formats make every operation a no-op that finds nothing.
 */
class LengthsAndType0Test {
    private static final int N = 3;

    /** The buffers of one call: interleaved blocks, data, metadata, and an output of each shape. */
    static final class Bufs {
        final byte[] blocks;
        final byte[] data;
        final byte[] md;
        final byte[] outBlocks;
        final byte[] outData;

        Bufs(BlockFormat f, int shortBlocks, int shortData, int shortMd, int shortOutBlocks, int shortOutData) {
            Random r = new Random(7);
            blocks = bytes(r, N * f.blockSize() - shortBlocks);
            data = bytes(r, N * f.dataSize() - shortData);
            md = bytes(r, N * f.metadataSize() - shortMd);
            outBlocks = bytes(r, N * f.blockSize() - shortOutBlocks);
            outData = bytes(r, N * f.dataSize() - shortOutData);
        }

        private static byte[] bytes(Random r, int n) {
            byte[] b = new byte[Math.max(0, n)];
            r.nextBytes(b);
            return b;
        }

        byte[][] all() {
            return new byte[][] {blocks.clone(), data.clone(), md.clone(), outBlocks.clone(), outData.clone()};
        }

        void assertUnchanged(byte[][] before, String what) {
            assertArrayEquals(before[0], blocks, what + ": blocks written");
            assertArrayEquals(before[1], data, what + ": data written");
            assertArrayEquals(before[2], md, what + ": metadata written");
            assertArrayEquals(before[3], outBlocks, what + ": output blocks written");
            assertArrayEquals(before[4], outData, what + ": output data written");
        }
    }

    static ScatterList l(byte[] b) {
        return TestLists.split(b, TestLists.Kind.HEAP, b.length / 2).list;
    }

    /** name, which list is one byte short (0 blocks, 1 data, 2 md, 3 out blocks, 4 out data), the call. */
    static List<Object[]> ops(PiContext c) {
        List<Object[]> ops = new ArrayList<>();
        Random r = new Random(1);
        ops.add(new Object[] {"generate", 0, (Consumer<Bufs>) b -> Pi.generate(c, l(b.blocks), N)});
        ops.add(new Object[] {"generate separate (data)", 1, (Consumer<Bufs>) b -> Pi.generate(c, l(b.data), l(b.md), N)});
        ops.add(new Object[] {"generate separate (md)", 2, (Consumer<Bufs>) b -> Pi.generate(c, l(b.data), l(b.md), N)});
        ops.add(new Object[] {"verify", 0, (Consumer<Bufs>) b -> Pi.verify(c, l(b.blocks), N)});
        ops.add(new Object[] {"verifyAll", 0, (Consumer<Bufs>) b -> Pi.verifyAll(c, l(b.blocks), N, 5)});
        ops.add(new Object[] {"verify separate (data)", 1, (Consumer<Bufs>) b -> Pi.verify(c, l(b.data), l(b.md), N)});
        ops.add(new Object[] {"verify separate (md)", 2, (Consumer<Bufs>) b -> Pi.verify(c, l(b.data), l(b.md), N)});
        ops.add(new Object[] {"insert (data)", 1, (Consumer<Bufs>) b -> Pi.insert(c, l(b.data), l(b.outBlocks), N)});
        ops.add(new Object[] {"insert (out)", 3, (Consumer<Bufs>) b -> Pi.insert(c, l(b.data), l(b.outBlocks), N)});
        ops.add(new Object[] {"strip (blocks)", 0, (Consumer<Bufs>) b -> Pi.strip(c, l(b.blocks), l(b.outData), N)});
        ops.add(new Object[] {"strip (out)", 4, (Consumer<Bufs>) b -> Pi.strip(c, l(b.blocks), l(b.outData), N)});
        ops.add(new Object[] {"practStrip (src)", 0, (Consumer<Bufs>) b -> Pi.practStrip(c, l(b.blocks),
                l(c.format().metadataSize() == c.format().tupleSize() ? b.outData : b.outBlocks), N)});
        ops.add(new Object[] {"remapRefTag", 0, (Consumer<Bufs>) b -> Pi.remapRefTag(c, l(b.blocks), N, 99, true)});
        ops.add(new Object[] {"remapRefTagSeparate", 2, (Consumer<Bufs>) b -> Pi.remapRefTagSeparate(c, l(b.md), N, 99, false)});
        if (c.format().hasPi()) {
            ops.add(new Object[] {"injectError", 0, (Consumer<Bufs>) b -> Pi.injectError(c, l(b.blocks), N,
                    InjectTarget.GUARD, r)});
            ops.add(new Object[] {"injectError separate (data)", 1, (Consumer<Bufs>) b -> Pi.injectError(c, l(b.data),
                    l(b.md), N, InjectTarget.DATA, r)});
            ops.add(new Object[] {"injectError separate (md)", 2, (Consumer<Bufs>) b -> Pi.injectError(c, l(b.data),
                    l(b.md), N, InjectTarget.REF_TAG, r)});
        }
        if (c.format().hasPi() && c.format().guard().isEightByteTuple()) {
            ops.add(new Object[] {"convertGuard", 0, (Consumer<Bufs>) b -> Pi.convertGuard(c, l(b.blocks), N,
                    GuardType.IP_CHECKSUM)});
            ops.add(new Object[] {"convertGuard separate (md)", 2, (Consumer<Bufs>) b -> Pi.convertGuard(c, l(b.data),
                    l(b.md), N, GuardType.IP_CHECKSUM)});
        }
        if (c.format().metadataSize() == c.format().tupleSize()) {
            ops.add(new Object[] {"practInsert (out)", 3, (Consumer<Bufs>) b -> Pi.practInsert(c, l(b.data),
                    l(b.outBlocks), N)});
        } else {
            ops.add(new Object[] {"practInsert (src)", 0, (Consumer<Bufs>) b -> Pi.practInsert(c, l(b.blocks),
                    l(b.outBlocks), N)});
            ops.add(new Object[] {"practInsert (out)", 3, (Consumer<Bufs>) b -> Pi.practInsert(c, l(b.blocks),
                    l(b.outBlocks), N)});
            ops.add(new Object[] {"practStrip (out)", 3, (Consumer<Bufs>) b -> Pi.practStrip(c, l(b.blocks),
                    l(b.outBlocks), N)});
        }
        return ops;
    }

    static Stream<Arguments> shortCases() {
        List<Arguments> out = new ArrayList<>();
        for (BlockFormat f : new BlockFormat[] {
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
                BlockFormat.of(512, 16, GuardType.IP_CHECKSUM, PiType.TYPE_3, PiLocation.LAST),
                BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_2, PiLocation.FIRST),
                BlockFormat.of(4096, 64, GuardType.CRC32C, PiType.TYPE_1, PiLocation.LAST),
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST),
                BlockFormat.of(4096, 64, GuardType.CRC64, PiType.TYPE_0, PiLocation.LAST)}) {
            for (Object[] op : ops(Fx.ctx(f))) {
                out.add(Arguments.of(f, op[0], op[1], op[2]));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("shortCases")
    @SuppressWarnings("unchecked")
    void oneByteShortIsRejectedBeforeAnythingIsWritten(BlockFormat f, String name, int which, Object call) {
        int[] shorts = new int[5];
        shorts[which] = 1;
        Bufs b = new Bufs(f, shorts[0], shorts[1], shorts[2], shorts[3], shorts[4]);
        byte[][] before = b.all();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ((Consumer<Bufs>) call).accept(b),
                name + " with a list one byte short");
        assertTrue(e.getMessage().contains("bytes, the operation needs"), e.getMessage());
        b.assertUnchanged(before, name);
        // and at the right length it runs
        Bufs ok = new Bufs(f, 0, 0, 0, 0, 0);
        ((Consumer<Bufs>) call).accept(ok);
    }

    static Stream<BlockFormat> type0Formats() {
        return Stream.of(BlockFormat.of(512, 0, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST),
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST),
                BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_0, PiLocation.LAST),
                BlockFormat.of(4096, 128, GuardType.CRC32C, PiType.TYPE_0, PiLocation.FIRST));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("type0Formats")
    void type0OperationsAreNoOps(BlockFormat f) {
        PiContext c = PiContext.builder(f).initialRefTag(22).appTag(0x22).build();
        Random r = new Random(11);
        byte[] blocks = Fx.randomBlocks(c, N, r);
        byte[] orig = blocks.clone();
        byte[][] dm = Fx.separate(c, blocks, N);
        byte[] md0 = dm[1].clone();
        Pi.generate(c, ScatterList.wrap(blocks), N);
        Pi.generate(c, ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), N);
        assertArrayEquals(orig, blocks, "generate");
        assertArrayEquals(md0, dm[1], "generate separate");
        assertNull(Pi.verify(c, ScatterList.wrap(blocks), N), "verify finds nothing in random bytes");
        assertNull(Pi.verify(c, ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), N));
        assertTrue(Pi.verifyAll(c, ScatterList.wrap(blocks), N, 9).isEmpty());
        assertNull(Pi.remapRefTag(c, ScatterList.wrap(blocks), N, 99, true));
        assertNull(Pi.remapRefTagSeparate(c, ScatterList.wrap(dm[1]), N, 99, true));
        assertArrayEquals(orig, blocks, "remap");
        assertArrayEquals(md0, dm[1], "remap separate");
        // insert copies the data with zero metadata; strip copies the data back
        byte[] out = new byte[blocks.length];
        Arrays.fill(out, (byte) 0x66);
        Pi.insert(c, ScatterList.wrap(dm[0]), ScatterList.wrap(out), N);
        assertArrayEquals(ReferencePi.interleave(c, dm[0], new byte[N * f.metadataSize()], N), out);
        byte[] back = new byte[dm[0].length];
        assertNull(Pi.strip(c, ScatterList.wrap(blocks), ScatterList.wrap(back), N));
        assertArrayEquals(dm[0], back);
        // the reference agrees: nothing to generate or find
        byte[] ref = orig.clone();
        ReferencePi.generate(c, ref, N);
        assertArrayEquals(orig, ref);
        assertEquals(0, ReferencePi.verifyAll(c, orig, N, 9).size());
    }
}
