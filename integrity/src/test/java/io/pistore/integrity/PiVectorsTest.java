package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.pistore.integrity.reference.ReferenceGuards;
import io.pistore.integrity.reference.ReferencePi;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Every entry of pi-vectors.json: check values, pattern guards, and whole tuples regenerated. */
class PiVectorsTest {
    private static final Map<String, Object> VECTORS = load();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> load() {
        try (InputStream in = PiVectorsTest.class.getResourceAsStream("/pi-vectors.json")) {
            if (in == null) {
                throw new IllegalStateException("pi-vectors.json is not on the test class path");
            }
            return (Map<String, Object>) MiniJson.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> section(String name) {
        return (List<Map<String, Object>>) VECTORS.get(name);
    }

    static GuardType guard(String alg) {
        switch (alg) {
            case "crc16-t10dif": return GuardType.CRC16;
            case "crc32c": return GuardType.CRC32C;
            case "crc64-nvme": return GuardType.CRC64;
            case "ip-checksum": return GuardType.IP_CHECKSUM;
            default: throw new IllegalArgumentException("unknown alg in vectors: " + alg);
        }
    }

    static long hex(Object s) {
        String t = ((String) s).trim().toLowerCase();
        if (!t.startsWith("0x")) {
            throw new IllegalArgumentException("not a hex value: " + s);
        }
        return Long.parseUnsignedLong(t.substring(2), 16);
    }

    /** The vectors' patterns; {@code i} counts data bytes within one block. */
    static byte patternByte(String pattern, int i) {
        switch (pattern) {
            case "zeros": return 0;
            case "ones": return (byte) 0xFF;
            case "inc": return (byte) i;
            case "dec": return (byte) (0xFF - (i & 0xFF));
            case "ab": return (byte) (0xAB + i);
            default: throw new IllegalArgumentException("unknown pattern " + pattern);
        }
    }

    static byte[] pattern(String pattern, int len) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = patternByte(pattern, i);
        }
        return b;
    }

    /** Library guard over the array three ways (array, heap buffer at an offset, direct buffer). */
    private static void assertGuard(GuardType g, byte[] in, long want, String what) {
        assertEquals(want, g.compute(in, 0, in.length), what + " (array)");
        byte[] padded = new byte[in.length + 5];
        System.arraycopy(in, 0, padded, 3, in.length);
        ByteBuffer heap = ByteBuffer.wrap(padded, 3, in.length);
        assertEquals(want, g.compute(heap), what + " (heap buffer at position 3)");
        assertEquals(3, heap.position(), what + ": compute moved the buffer");
        ByteBuffer direct = ByteBuffer.allocateDirect(in.length);
        direct.put(in).flip();
        assertEquals(want, g.compute(direct), what + " (direct buffer)");
        assertEquals(want, ReferenceGuards.guard(g, 0, in, 0, in.length), what + " (reference guard)");
    }

    @Test
    void theVectorFileHasEverySection() {
        assertFalse(section("check").isEmpty());
        assertEquals(8, section("patterns").size(), "zeros/ones/inc/dec x 512/4096");
        assertFalse(section("tuples").isEmpty());
    }

    @TestFactory
    Stream<DynamicTest> checkValues() {
        List<DynamicTest> out = new ArrayList<>();
        for (Map<String, Object> v : section("check")) {
            String alg = (String) v.get("alg");
            String input = (String) v.get("input_ascii");
            long want = hex(v.get("value"));
            out.add(dynamicTest(alg + " \"" + input + "\"", () ->
                    assertGuard(guard(alg), input.getBytes(StandardCharsets.US_ASCII), want, alg + " of " + input)));
        }
        return out.stream();
    }

    @TestFactory
    Stream<DynamicTest> patternGuards() {
        List<DynamicTest> out = new ArrayList<>();
        for (Map<String, Object> v : section("patterns")) {
            String p = (String) v.get("pattern");
            int len = ((Long) v.get("length")).intValue();
            for (String alg : new String[] {"crc16-t10dif", "crc32c", "crc64-nvme", "ip-checksum"}) {
                long want = hex(v.get(alg));
                out.add(dynamicTest(p + " x " + len + " " + alg, () ->
                        assertGuard(guard(alg), pattern(p, len), want, alg + " of " + p + " x " + len)));
            }
        }
        return out.stream();
    }

    @TestFactory
    Stream<DynamicTest> wholeTuples() {
        List<DynamicTest> out = new ArrayList<>();
        for (Map<String, Object> v : section("tuples")) {
            int ds = ((Long) v.get("data_size")).intValue();
            int ms = ((Long) v.get("md_size")).intValue();
            GuardType g = guard((String) v.get("guard"));
            PiType type = PiType.of(((Long) v.get("pi_type")).intValue());
            PiLocation loc = PiLocation.parse((String) v.get("pi_location"));
            BlockFormat f = BlockFormat.of(ds, ms, g, type, loc);
            PiContext ctx = PiContext.builder(f).initialRefTag(hex(v.get("ref0"))).appTag((int) hex(v.get("app")))
                    .build();
            String pattern = (String) v.get("pattern");
            @SuppressWarnings("unchecked")
            List<String> tuples = (List<String>) v.get("pi_hex_per_block");
            out.add(dynamicTest(f + " ref0=" + v.get("ref0") + " app=" + v.get("app") + " " + pattern,
                    () -> checkTuples(ctx, pattern, tuples)));
        }
        return out.stream();
    }

    private static void checkTuples(PiContext ctx, String pattern, List<String> tuples) {
        BlockFormat f = ctx.format();
        int n = tuples.size();
        int ds = f.dataSize();
        int bs = f.blockSize();
        byte[] data = new byte[n * ds];
        byte[] expected = new byte[n * bs];
        byte[] expectedMd = new byte[n * f.metadataSize()];
        int tupleAt = f.location() == PiLocation.FIRST ? 0 : f.metadataSize() - f.guard().tupleSize();
        for (int b = 0; b < n; b++) {
            byte[] block = pattern(pattern, ds);
            System.arraycopy(block, 0, data, b * ds, ds);
            System.arraycopy(block, 0, expected, b * bs, ds);
            byte[] tuple = HexFormat.of().parseHex(tuples.get(b));
            assertEquals(f.guard().tupleSize(), tuple.length, "tuple length in the vector file");
            System.arraycopy(tuple, 0, expected, b * bs + ds + tupleAt, tuple.length);
            System.arraycopy(tuple, 0, expectedMd, b * f.metadataSize() + tupleAt, tuple.length);
        }

        // insert: data-only -> interleaved
        byte[] out = new byte[n * bs];
        java.util.Arrays.fill(out, (byte) 0xEE); // insert must zero the other metadata bytes
        Pi.insert(ctx, ScatterList.wrap(data), ScatterList.wrap(out), n);
        assertArrayEquals(expected, out, "Pi.insert");

        // generate in place on interleaved blocks with zero metadata
        byte[] inPlace = new byte[n * bs];
        for (int b = 0; b < n; b++) {
            System.arraycopy(data, b * ds, inPlace, b * bs, ds);
        }
        Pi.generate(ctx, ScatterList.wrap(inPlace), n);
        assertArrayEquals(expected, inPlace, "Pi.generate (interleaved)");

        // generate separate metadata
        byte[] md = new byte[n * f.metadataSize()];
        Pi.generate(ctx, ScatterList.wrap(data.clone()), ScatterList.wrap(md), n);
        assertArrayEquals(expectedMd, md, "Pi.generate (separate)");

        // the reference agrees, and everything verifies
        assertArrayEquals(expected, ReferencePi.insert(ctx, data, n), "ReferencePi.insert");
        assertNull(Pi.verify(ctx, ScatterList.wrap(expected), n));
        assertNull(Pi.verify(ctx, ScatterList.wrap(data), ScatterList.wrap(expectedMd), n));
        assertTrue(ReferencePi.verifyAll(ctx, expected, n, n).isEmpty());
    }
}
