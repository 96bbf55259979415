package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** SPDK catalog A: formats and contexts that must be rejected, with a message that says why. */
class ContextValidationTest {

    static Stream<Arguments> badFormats() {
        return Stream.of(
                // dif_sec_8_md_8_error_test / dix_sec_0_md_8_error
                Arguments.of(8, 8, GuardType.CRC16, PiType.TYPE_1, "data size must be a power of two from 512"),
                Arguments.of(0, 8, GuardType.CRC16, PiType.TYPE_1, "data size must be a power of two from 512"),
                // dif_sec_512_md_0_error_test
                Arguments.of(512, 0, GuardType.CRC16, PiType.TYPE_1, "needs at least 8 bytes of metadata"),
                Arguments.of(4096, 0, GuardType.CRC64, PiType.TYPE_3, "needs at least 16 bytes of metadata"),
                // dif_sec_512_md_16_error_test: 16-byte PI needs 4K data
                Arguments.of(512, 16, GuardType.CRC64, PiType.TYPE_1, "needs data blocks of at least 4096"),
                Arguments.of(512, 16, GuardType.CRC32C, PiType.TYPE_2, "needs data blocks of at least 4096"),
                Arguments.of(2048, 64, GuardType.CRC64, PiType.TYPE_1, "needs data blocks of at least 4096"),
                // dif_sec_4096_md_0_8_error_test: md < tuple
                Arguments.of(4096, 8, GuardType.CRC64, PiType.TYPE_1, "needs at least 16 bytes of metadata"),
                Arguments.of(4096, 8, GuardType.CRC32C, PiType.TYPE_3, "needs at least 16 bytes of metadata"),
                Arguments.of(4096, 15, GuardType.CRC64, PiType.TYPE_2, "needs at least 16 bytes of metadata"),
                Arguments.of(512, 7, GuardType.CRC16, PiType.TYPE_1, "needs at least 8 bytes of metadata"),
                Arguments.of(512, 4, GuardType.IP_CHECKSUM, PiType.TYPE_1, "needs at least 8 bytes of metadata"),
                // dif_sec_4100_md_128_error_test: non-power-of-two data
                Arguments.of(4100, 128, GuardType.CRC64, PiType.TYPE_1, "power of two"),
                Arguments.of(520, 8, GuardType.CRC16, PiType.TYPE_1, "power of two"),
                Arguments.of(4160, 0, GuardType.CRC16, PiType.TYPE_0, "power of two"),
                Arguments.of(131072, 8, GuardType.CRC16, PiType.TYPE_1, "power of two from 512 to 65536"),
                // md > 128, negative md
                Arguments.of(4096, 129, GuardType.CRC64, PiType.TYPE_1, "metadata size must be 0 to 128"),
                Arguments.of(4096, 256, GuardType.CRC16, PiType.TYPE_0, "metadata size must be 0 to 128"),
                Arguments.of(4096, -8, GuardType.CRC16, PiType.TYPE_0, "metadata size must be 0 to 128"));
    }

    @ParameterizedTest(name = "{0}+{1} {2} type {3} rejected")
    @MethodSource("badFormats")
    void badFormatIsRejectedWithReason(int data, int md, GuardType g, PiType t, String why) {
        for (PiLocation l : PiLocation.values()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> BlockFormat.of(data, md, g, t, l));
            assertTrue(e.getMessage().contains(why), "message '" + e.getMessage() + "' should say: " + why);
        }
    }

    static Stream<Arguments> goodFormats() {
        return Stream.of(
                Arguments.of(512, 8, GuardType.CRC16, PiType.TYPE_1),
                Arguments.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_3),
                Arguments.of(512, 16, GuardType.CRC16, PiType.TYPE_2),
                Arguments.of(512, 0, GuardType.CRC16, PiType.TYPE_0),
                Arguments.of(512, 16, GuardType.CRC64, PiType.TYPE_0),
                Arguments.of(4096, 16, GuardType.CRC64, PiType.TYPE_1),
                Arguments.of(4096, 16, GuardType.CRC32C, PiType.TYPE_3),
                Arguments.of(4096, 128, GuardType.CRC64, PiType.TYPE_2),
                Arguments.of(65536, 128, GuardType.CRC32C, PiType.TYPE_1),
                Arguments.of(4096, 0, GuardType.CRC64, PiType.TYPE_0));
    }

    @ParameterizedTest(name = "{0}+{1} {2} type {3} accepted")
    @MethodSource("goodFormats")
    void goodFormatIsAccepted(int data, int md, GuardType g, PiType t) {
        BlockFormat f = assertDoesNotThrow(() -> BlockFormat.of(data, md, g, t, PiLocation.LAST));
        assertEquals(data + md, f.blockSize());
        assertEquals(t.isProtected() ? g.tupleSize() : 0, f.tupleSize());
    }

    static Stream<Arguments> badContexts() {
        BlockFormat f16 = BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
        BlockFormat ip = BlockFormat.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_1, PiLocation.FIRST);
        BlockFormat f32 = BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_1, PiLocation.FIRST);
        BlockFormat f64 = BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_1, PiLocation.FIRST);
        return Stream.of(
                Arguments.of("app tag 0x10000", PiContext.builder(f16).appTag(0x10000), "app tag must be 0 to 0xFFFF"),
                Arguments.of("app tag -1", PiContext.builder(f64).appTag(-1), "app tag must be 0 to 0xFFFF"),
                Arguments.of("app mask 0x10000", PiContext.builder(f16).appMask(0x10000), "app mask must be 0 to 0xFFFF"),
                Arguments.of("app mask -1", PiContext.builder(f32).appMask(-1), "app mask must be 0 to 0xFFFF"),
                Arguments.of("ref 2^32 on crc16", PiContext.builder(f16).initialRefTag(1L << 32),
                        "does not fit the 32-bit reference tag"),
                Arguments.of("ref -1 on crc16", PiContext.builder(f16).initialRefTag(-1L),
                        "does not fit the 32-bit reference tag"),
                Arguments.of("ref 2^48 on crc64", PiContext.builder(f64).initialRefTag(1L << 48),
                        "does not fit the 48-bit reference tag"),
                Arguments.of("seed 0x10000 on crc16", PiContext.builder(f16).guardSeed(0x10000),
                        "does not fit the 16-bit guard"),
                Arguments.of("seed 0x10000 on ip", PiContext.builder(ip).guardSeed(0x10000),
                        "does not fit the 16-bit guard"),
                Arguments.of("seed 2^32 on crc32c", PiContext.builder(f32).guardSeed(1L << 32),
                        "does not fit the 32-bit guard"));
    }

    @ParameterizedTest(name = "{0} rejected")
    @MethodSource("badContexts")
    void badContextIsRejectedWithReason(String what, PiContext.Builder b, String why) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains(why), "message '" + e.getMessage() + "' should say: " + why);
    }

    @ParameterizedTest(name = "{0} rejected by PiContext.of too")
    @MethodSource("badContexts")
    void theOneCallFactoryValidatesLikeTheBuilder(String what, PiContext.Builder b, String why) {
        PiContext ok = b.appTag(0).appMask(0).initialRefTag(0).guardSeed(0).build();
        BlockFormat f = ok.format();
        if (what.startsWith("seed")) {
            return; // PiContext.of has no seed (always 0)
        }
        int app = what.startsWith("app tag") ? (what.endsWith("-1") ? -1 : 0x10000) : 0;
        int mask = what.startsWith("app mask") ? (what.endsWith("-1") ? -1 : 0x10000) : 0;
        long ref = what.startsWith("ref") ? (what.contains("-1") ? -1L : what.contains("2^48") ? 1L << 48 : 1L << 32) : 0;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PiContext.of(f, CheckFlags.ALL, ref, app, mask));
        assertTrue(e.getMessage().contains(why), "message '" + e.getMessage() + "' should say: " + why);
    }

    @org.junit.jupiter.api.Test
    void theOneCallFactoryBuildsWhatTheBuilderBuilds() {
        BlockFormat f = BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_2, PiLocation.LAST);
        PiContext a = PiContext.of(f, CheckFlags.of(true, false, true), 77, 0x1234, 0xFF00);
        PiContext b = PiContext.builder(f).checks(CheckFlags.of(true, false, true)).initialRefTag(77).appTag(0x1234)
                .appMask(0xFF00).build();
        assertEquals(b.toString(), a.toString());
        assertEquals(b.refTag(5), a.refTag(5));
        assertEquals(b.guardPath(), a.guardPath());
    }

    @ParameterizedTest(name = "{0}: largest in-range values accepted")
    @MethodSource("edgeContexts")
    void largestInRangeValuesAreAccepted(GuardType g, long maxRef, long maxSeed) {
        BlockFormat f = BlockFormat.of(4096, 16, g, PiType.TYPE_1, PiLocation.FIRST);
        PiContext c = assertDoesNotThrow(() -> PiContext.builder(f).initialRefTag(maxRef).guardSeed(maxSeed)
                .appTag(0xFFFF).appMask(0xFFFF).build());
        // the ref tag rolls over from all-ones to 0
        assertEquals(0L, c.refTag(1));
        assertEquals(maxRef, c.refTag(0));
    }

    static Stream<Arguments> edgeContexts() {
        return Stream.of(
                Arguments.of(GuardType.CRC16, 0xFFFFFFFFL, 0xFFFFL),
                Arguments.of(GuardType.IP_CHECKSUM, 0xFFFFFFFFL, 0xFFFFL),
                Arguments.of(GuardType.CRC32C, -1L, 0xFFFFFFFFL),
                Arguments.of(GuardType.CRC64, (1L << 48) - 1, -1L));
    }

    @ParameterizedTest(name = "PI type {0} rejected")
    @MethodSource("badTypeNumbers")
    void badPiTypeNumberIsRejected(int n) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PiType.of(n));
        assertTrue(e.getMessage().contains("PI type must be 0, 1, 2 or 3"), e.getMessage());
    }

    static Stream<Integer> badTypeNumbers() {
        return Stream.of(-1, 4, 7);
    }

    @ParameterizedTest(name = "guard ''{0}'' rejected")
    @MethodSource("badGuardNames")
    void badGuardNameIsRejected(String name) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GuardType.parse(name));
        assertTrue(e.getMessage().contains("unknown guard"), e.getMessage());
    }

    static Stream<String> badGuardNames() {
        return Stream.of("crc8", "", "pi16x");
    }

    @ParameterizedTest(name = "check bits {0} rejected")
    @MethodSource("badCheckBits")
    void badCheckBitsAreRejected(int bits) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckFlags.fromBits(bits));
        assertTrue(e.getMessage().contains("check flags must be"), e.getMessage());
    }

    static Stream<Integer> badCheckBits() {
        return Stream.of(8, -1, 0x10);
    }
}
