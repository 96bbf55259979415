package io.pistore.integrity.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.GuardType;
import io.pistore.integrity.reference.ReferenceGuards;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every guard kernel against the bitwise {@link ReferenceGuards}: random lengths and offsets, every
 * kind of buffer, seeds, {@code update} chained over random splits, and {@code updateBlocks} against
 * one {@code update} per block.
 */
class GuardKernelTest {
    private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);

    /** The kinds of buffer a kernel may be handed. */
    enum Memory { HEAP, HEAP_OFFSET, HEAP_READ_ONLY, DIRECT, DIRECT_READ_ONLY }

    static GuardAlgorithm algorithm(GuardType t) {
        switch (t) {
            case CRC16: return Crc16T10Dif.INSTANCE;
            case IP_CHECKSUM: return IpChecksum.INSTANCE;
            case CRC32C: return Crc32cGuard.INSTANCE;
            default: return Crc64Nvme.INSTANCE;
        }
    }

    /** A random seed of the guard's width (the IP checksum and CRC-16 take 16 bits). */
    static long randomSeed(GuardType t, SplittableRandom r) {
        switch (r.nextInt(4)) {
            case 0: return 0;
            case 1: return t.guardMask();
            default: return r.nextLong() & t.guardMask();
        }
    }

    static long reference(GuardType t, long seed, byte[] b, int off, int len) {
        return ReferenceGuards.guard(t, seed, b, off, len) & t.guardMask();
    }

    /**
     * A big-endian buffer over a copy of {@code a}, in which the byte {@code a[i]} is at absolute
     * index {@code i} (for HEAP_OFFSET the backing array has a non-zero array offset).
     */
    static ByteBuffer buffer(Memory m, byte[] a) {
        switch (m) {
            case HEAP:
                return ByteBuffer.wrap(a.clone());
            case HEAP_OFFSET: {
                byte[] big = new byte[a.length + 13];
                System.arraycopy(a, 0, big, 13, a.length);
                ByteBuffer b = ByteBuffer.wrap(big).position(13).slice();
                if (b.arrayOffset() != 13) {
                    throw new AssertionError("slice should have an array offset");
                }
                return b;
            }
            case HEAP_READ_ONLY:
                return ByteBuffer.wrap(a.clone()).asReadOnlyBuffer();
            case DIRECT:
                return ByteBuffer.allocateDirect(a.length).put(a).clear();
            default:
                return ByteBuffer.allocateDirect(a.length).put(a).clear().asReadOnlyBuffer();
        }
    }

    static byte[] randomBytes(SplittableRandom r, int n) {
        byte[] a = new byte[n];
        for (int i = 0; i < n; i++) {
            a[i] = (byte) r.nextInt(256);
        }
        return a;
    }

    static Stream<Arguments> guardsAndMemories() {
        return Arrays.stream(GuardType.values())
                .flatMap(g -> Arrays.stream(Memory.values()).map(m -> Arguments.of(g, m)));
    }

    private static long guardOf(GuardAlgorithm a, long seed, ByteBuffer b, int off, int len) {
        return a.finish(a.update(a.start(seed), b, off, len));
    }

    @Test
    void knownCheckValues() {
        assertEquals(0xD0DBL, Crc16T10Dif.INSTANCE.finish(Crc16T10Dif.INSTANCE.update(
                Crc16T10Dif.INSTANCE.start(0), CHECK, 0, CHECK.length)));
        assertEquals(0xE3069283L, Crc32cGuard.INSTANCE.finish(Crc32cGuard.INSTANCE.update(
                Crc32cGuard.INSTANCE.start(0), CHECK, 0, CHECK.length)));
        assertEquals(0xAE8B14860A799888L, Crc64Nvme.INSTANCE.finish(Crc64Nvme.INSTANCE.update(
                Crc64Nvme.INSTANCE.start(0), CHECK, 0, CHECK.length)));
        for (Memory m : Memory.values()) {
            ByteBuffer b = buffer(m, CHECK);
            assertEquals(0xD0DBL, guardOf(Crc16T10Dif.INSTANCE, 0, b, 0, 9), m.name());
            assertEquals(0xE3069283L, guardOf(Crc32cGuard.INSTANCE, 0, b, 0, 9), m.name());
            assertEquals(0xAE8B14860A799888L, guardOf(Crc64Nvme.INSTANCE, 0, b, 0, 9), m.name());
        }
        // The reference agrees, so the cross-checks below check the right functions.
        assertEquals(0xD0DB, ReferenceGuards.crc16(0, CHECK, 0, 9));
        assertEquals(0xE3069283L, ReferenceGuards.crc32c(0, CHECK, 0, 9));
        assertEquals(0xAE8B14860A799888L, ReferenceGuards.crc64(0, CHECK, 0, 9));
    }

    @Test
    void ipChecksumOfKnownWords() {
        // RFC 1071 example words 0x0001 0xF203 0xF4F5 0xF6F7: sum 0x2DDF0 -> 0xDDF2, checksum 0x220D.
        byte[] b = {0x00, 0x01, (byte) 0xF2, 0x03, (byte) 0xF4, (byte) 0xF5, (byte) 0xF6, (byte) 0xF7};
        IpChecksum a = IpChecksum.INSTANCE;
        assertEquals(0x220DL, a.finish(a.update(a.start(0), b, 0, b.length)));
        assertEquals(0x220D, ReferenceGuards.ipChecksum(0, b, 0, b.length));
    }

    /** Every length 0..300 (all tails and the short-run thresholds) from offset 0..3, heap and direct. */
    @ParameterizedTest
    @EnumSource(GuardType.class)
    void everyShortLength(GuardType t) {
        GuardAlgorithm a = algorithm(t);
        SplittableRandom r = new SplittableRandom(t.ordinal());
        byte[] data = randomBytes(r, 310);
        ByteBuffer direct = buffer(Memory.DIRECT, data);
        for (int off = 0; off < 4; off++) {
            for (int len = 0; len <= 300; len++) {
                long seed = randomSeed(t, r);
                long want = reference(t, seed, data, off, len);
                String at = t + " off " + off + " len " + len + " seed " + Long.toHexString(seed);
                assertEquals(want, a.finish(a.update(a.start(seed), data, off, len)), at + " byte[]");
                assertEquals(want, guardOf(a, seed, direct, off, len), at + " direct");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("guardsAndMemories")
    void randomLengthsOffsetsAndSeeds(GuardType t, Memory m) {
        GuardAlgorithm a = algorithm(t);
        SplittableRandom r = new SplittableRandom(1000L * t.ordinal() + m.ordinal());
        for (int iter = 0; iter < 150; iter++) {
            int len = r.nextInt(9001);
            int off = r.nextInt(40);
            byte[] data = randomBytes(r, off + len + r.nextInt(20));
            long seed = randomSeed(t, r);
            long want = reference(t, seed, data, off, len);
            String at = t + " " + m + " off " + off + " len " + len + " seed " + Long.toHexString(seed);
            assertEquals(want, guardOf(a, seed, buffer(m, data), off, len), at);
            assertEquals(want, a.finish(a.update(a.start(seed), data, off, len)), at + " byte[]");
        }
    }

    /** A run cut at random points; each piece may come from a different kind of buffer. */
    @ParameterizedTest
    @EnumSource(GuardType.class)
    void updateChainsAcrossRandomSplits(GuardType t) {
        GuardAlgorithm a = algorithm(t);
        SplittableRandom r = new SplittableRandom(77 + t.ordinal());
        Memory[] memories = Memory.values();
        for (int iter = 0; iter < 200; iter++) {
            int len = r.nextInt(9001);
            byte[] data = randomBytes(r, len);
            long seed = randomSeed(t, r);
            long want = reference(t, seed, data, 0, len);
            ByteBuffer[] views = new ByteBuffer[memories.length];
            for (int k = 0; k < memories.length; k++) {
                views[k] = buffer(memories[k], data);
            }
            long s = a.start(seed);
            int pos = 0;
            StringBuilder cuts = new StringBuilder();
            while (pos < len) {
                // Mostly small pieces (odd lengths, a byte or two), sometimes long ones.
                int n = r.nextInt(4) == 0 ? 1 + r.nextInt(len - pos) : 1 + r.nextInt(Math.min(len - pos, 37));
                int k = r.nextInt(memories.length + 1);
                s = k == memories.length ? a.update(s, data, pos, n) : a.update(s, views[k], pos, n);
                cuts.append(pos).append('+').append(n).append(k == memories.length ? "a " : "b" + k + " ");
                pos += n;
            }
            if (r.nextBoolean()) {
                s = a.update(s, data, len, 0); // an empty update changes nothing
            }
            assertEquals(want, a.finish(s), t + " len " + len + " seed " + Long.toHexString(seed) + " cuts " + cuts);
        }
    }

    /** {@code updateBlocks} equals one {@code update} per block, for random layouts, seeds and buffers. */
    @ParameterizedTest
    @MethodSource("guardsAndMemories")
    void updateBlocksMatchesPerBlockUpdate(GuardType t, Memory m) {
        GuardAlgorithm a = algorithm(t);
        SplittableRandom r = new SplittableRandom(5000L * t.ordinal() + m.ordinal());
        for (int iter = 0; iter < 60; iter++) {
            int len = r.nextInt(4) == 0 ? r.nextInt(64) : (r.nextBoolean() ? 512 << r.nextInt(4) : r.nextInt(4200));
            int stride = len + (r.nextBoolean() ? 0 : r.nextInt(24));
            int count = r.nextInt(4) == 0 ? r.nextInt(4) : r.nextInt(13);
            int off = r.nextInt(30);
            byte[] data = randomBytes(r, off + stride * count + len + 1);
            long seed = randomSeed(t, r);
            ByteBuffer b = buffer(m, data);
            long[] out = new long[count + 3];
            Arrays.fill(out, 0x5EED5EED5EEDL);
            a.updateBlocks(b, off, stride, len, count, seed, out);
            String at = t + " " + m + " off " + off + " stride " + stride + " len " + len + " count " + count
                    + " seed " + Long.toHexString(seed);
            for (int k = 0; k < count; k++) {
                int blockOff = off + k * stride;
                assertEquals(a.update(a.start(seed), b, blockOff, len), out[k], at + " state of block " + k);
                assertEquals(reference(t, seed, data, blockOff, len), a.finish(out[k]), at + " guard of block " + k);
            }
            for (int k = count; k < out.length; k++) {
                assertEquals(0x5EED5EED5EEDL, out[k], at + " wrote past count at " + k);
            }
            // The states continue like any other state (Pi continues them over a metadata prefix).
            if (count > 0) {
                int extra = r.nextInt(40);
                byte[] more = randomBytes(r, extra);
                byte[] whole = new byte[len + extra];
                System.arraycopy(data, off, whole, 0, len);
                System.arraycopy(more, 0, whole, len, extra);
                assertEquals(reference(t, seed, whole, 0, whole.length), a.finish(a.update(out[0], more, 0, extra)),
                        at + " continued");
            }
        }
    }

    /** The kernels read big-endian buffers with absolute indexes and never move them. */
    @ParameterizedTest
    @MethodSource("guardsAndMemories")
    void buffersAreNotMoved(GuardType t, Memory m) {
        GuardAlgorithm a = algorithm(t);
        byte[] data = randomBytes(new SplittableRandom(3), 5000);
        ByteBuffer b = buffer(m, data).position(100).limit(4000);
        a.update(a.start(0), b, 0, 3999);
        a.updateBlocks(b, 8, 520, 512, 7, 0, new long[7]);
        assertEquals(100, b.position());
        assertEquals(4000, b.limit());
        assertEquals(ByteOrder.BIG_ENDIAN, b.order());
    }
}
