package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PiStreamTest {

    static Stream<Arguments> formats() {
        return Stream.of(
                Arguments.of(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(512, 16, GuardType.IP_CHECKSUM, PiType.TYPE_2, PiLocation.LAST)),
                Arguments.of(BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_1, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(4096, 64, GuardType.CRC64, PiType.TYPE_3, PiLocation.LAST)),
                Arguments.of(BlockFormat.of(4096, 128, GuardType.CRC64, PiType.TYPE_1, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST)));
    }

    private static PiContext ctx(BlockFormat f) {
        return PiContext.builder(f).initialRefTag(22).appTag(0x22).guardSeed(f.guard() == GuardType.CRC16 ? 0xCD : 0)
                .build();
    }

    /**
     * Feeds {@code payload} to the stream in random chunks, some direct, some heap, some through the
     * absolute-range update (which must leave the buffer's position alone), some of those in a
     * little-endian buffer.
     */
    private static List<PiError> feed(PiStream s, byte[] payload, Random r, int maxChunk) {
        List<PiError> errors = new ArrayList<>();
        int off = 0;
        while (off < payload.length) {
            int n = Math.min(payload.length - off, 1 + r.nextInt(maxChunk));
            ByteBuffer chunk;
            int how = r.nextInt(3);
            if (how == 2) {
                ByteBuffer d = r.nextBoolean() ? ByteBuffer.allocateDirect(n + 9) : ByteBuffer.allocate(n + 9);
                if (r.nextBoolean()) {
                    d.order(java.nio.ByteOrder.LITTLE_ENDIAN);
                }
                d.put(5, payload, off, n);
                d.position(1).limit(n + 7);
                PiError e = s.update(d, 5, n);
                if (e != null) errors.add(e);
                assertEquals(1, d.position());
                assertEquals(n + 7, d.limit());
                d.get(5, payload, off, n);
            } else if (how == 0) {
                chunk = ByteBuffer.wrap(payload, off, n);
                PiError e = s.update(chunk);
                if (e != null) errors.add(e);
                assertEquals(off + n, chunk.position());
            } else {
                ByteBuffer d = ByteBuffer.allocateDirect(n + 3);
                d.position(3);
                d.put(payload, off, n);
                d.position(3);
                PiError e = s.update(d);
                if (e != null) errors.add(e);
                d.position(3);
                d.get(payload, off, n); // a generator wrote tuple bytes into the chunk
            }
            off += n;
        }
        return errors;
    }

    @ParameterizedTest
    @MethodSource("formats")
    void generatorMatchesBlockGenerate(BlockFormat f) {
        Random r = new Random(f.hashCode());
        int n = 5;
        for (int maxChunk : new int[] {1, 3, 7, 520, 5000}) {
            byte[] a = new byte[n * f.blockSize()];
            r.nextBytes(a);
            byte[] b = a.clone();
            Pi.generate(ctx(f), ScatterList.wrap(a), n);
            PiStream s = PiStream.generator(ctx(f), n);
            feed(s, b, r, maxChunk);
            assertTrue(s.isComplete());
            assertArrayEquals(a, b, "chunks of up to " + maxChunk);
        }
    }

    @ParameterizedTest
    @MethodSource("formats")
    void verifierFindsWhatBlockVerifyFinds(BlockFormat f) {
        Random r = new Random(f.hashCode() * 31L);
        int n = 6;
        for (int round = 0; round < 20; round++) {
            byte[] a = new byte[n * f.blockSize()];
            r.nextBytes(a);
            Pi.generate(ctx(f), ScatterList.wrap(a), n);
            if (f.hasPi()) {
                for (int k = r.nextInt(3); k > 0; k--) {
                    Pi.injectError(ctx(f), ScatterList.wrap(a), n, InjectTarget.values()[r.nextInt(4)], r);
                }
            }
            List<PiError> want = Pi.verifyAll(ctx(f), ScatterList.wrap(a), n, n);
            PiStream s = PiStream.verifier(ctx(f), n, n);
            List<PiError> firstPerChunk = feed(s, a.clone(), r, 1 + r.nextInt(f.blockSize() * 2));
            assertEquals(want, s.errors());
            assertTrue(want.containsAll(firstPerChunk), "each chunk reports one of its own errors");
            assertEquals(want.isEmpty(), firstPerChunk.isEmpty());
            assertEquals(want.size(), s.errorCount());
            assertEquals(want.isEmpty() ? null : want.get(0), s.firstError());
        }
    }

    @org.junit.jupiter.api.Test
    void aRestartedStreamActsAsANewOneAcrossFormatsAndAfterErrorsOrAnAbandonedTransfer() {
        Random r = new Random(77);
        PiStream gen = PiStream.generator(ctx(BlockFormat.of(512, 8)), 1);
        PiStream ver = PiStream.verifier(ctx(BlockFormat.of(512, 8)), 1);
        List<BlockFormat> fs = new ArrayList<>();
        formats().forEach(a -> fs.add((BlockFormat) a.get()[0]));
        for (int round = 0; round < 60; round++) {
            BlockFormat f = fs.get(r.nextInt(fs.size()));
            int n = 1 + r.nextInt(4);
            byte[] want = new byte[n * f.blockSize()];
            r.nextBytes(want);
            byte[] got = want.clone();
            Pi.generate(ctx(f), ScatterList.wrap(want), n);
            feed(gen.restart(ctx(f), n), got, r, 700);
            assertArrayEquals(want, got, "restarted generator, " + f);
            if (f.hasPi() && r.nextBoolean()) {
                Pi.injectError(ctx(f), ScatterList.wrap(got), n, InjectTarget.values()[r.nextInt(4)], r);
            }
            List<PiError> expected = Pi.verifyAll(ctx(f), ScatterList.wrap(got), n, 1);
            feed(ver.restart(ctx(f), n), got, r, 700);
            assertTrue(ver.isComplete());
            assertEquals(expected.isEmpty() ? null : expected.get(0), ver.firstError(), "restarted verifier, " + f);
            assertEquals(expected.isEmpty() ? 0 : Pi.verifyAll(ctx(f), ScatterList.wrap(got), n, n).size(),
                    ver.errorCount());
            // Sometimes abandon the next transfer halfway: the restart after it must not care.
            if (r.nextBoolean()) {
                ver.restart(ctx(f), n).update(ByteBuffer.wrap(got, 0, 1 + r.nextInt(got.length - 1)));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("formats")
    void chunkPastTheEndIsRefusedWithoutConsuming(BlockFormat f) {
        PiStream s = PiStream.generator(ctx(f), 2);
        ByteBuffer first = ByteBuffer.allocate(f.blockSize() + 1);
        assertNull(s.update(first));
        ByteBuffer tooMuch = ByteBuffer.allocate(f.blockSize());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.update(tooMuch));
        assertTrue(e.getMessage().contains("past the end"), e.getMessage());
        assertEquals(0, tooMuch.position());
        assertEquals(f.blockSize() + 1L, s.bytesSeen());
        assertThrows(IllegalStateException.class, () -> s.update(tooMuch, 0, f.blockSize()));
        assertThrows(IndexOutOfBoundsException.class, () -> s.update(tooMuch, 1, f.blockSize()));
        assertEquals(f.blockSize() + 1L, s.bytesSeen());
    }
}
