package io.pistore.app.cli;

import io.pistore.engine.scrub.BadBlockReport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.reference.ReferenceGuards;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Drives {@link Main} in-process on real temporary files. */
class PiToolTest {
    @TempDir
    Path dir;

    // ------------------------------------------------------------------ harness

    record Result(int code, String out, String err) {
        List<String> outLines() {
            return out.isEmpty() ? List.of() : Arrays.asList(out.split("\n"));
        }

        List<String> errLines() {
            return err.isEmpty() ? List.of() : Arrays.asList(err.split("\n"));
        }

        List<String> badLines() {
            return outLines().stream().filter(l -> l.startsWith("lba=")).collect(Collectors.toList());
        }

        String summary() {
            List<String> l = outLines();
            return l.isEmpty() ? "" : l.get(l.size() - 1);
        }

        @Override
        public String toString() {
            return "exit " + code + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(code, out.toString(), err.toString());
    }

    static Result run(List<String> args) {
        return run(args.toArray(new String[0]));
    }

    Path write(String name, byte[] b) throws IOException {
        return Files.write(dir.resolve(name), b);
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String p(Path path) {
        return path.toString();
    }

    // ------------------------------------------------------------------ formats

    /** A format as options, with the reference that describes the same PI. */
    record Case(String name, List<String> options, HandWrittenPi ref) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> formats() {
        return Stream.of(
                new Case("512+8 crc16 (defaults)", List.of("--format", "512+8"),
                        new HandWrittenPi(512, 8, GuardType.CRC16, 1, false, 0, 0)),
                new Case("4096+8 ip", List.of("--format", "4096+8", "--guard", "ip", "--ref-tag", "0x16", "--app-tag", "0x22"),
                        new HandWrittenPi(4096, 8, GuardType.IP_CHECKSUM, 1, false, 0x16, 0x22)),
                new Case("4096+16 crc32c", List.of("--format", "4096+16", "--guard", "crc32c", "--ref-tag", "0xfedcba9876543210"),
                        new HandWrittenPi(4096, 16, GuardType.CRC32C, 1, false, 0xfedcba9876543210L, 0)),
                new Case("4096+64 crc64 PI last", List.of("--format", "4096+64", "--guard", "crc64", "--pi-location", "last",
                        "--app-tag", "48879"),
                        new HandWrittenPi(4096, 64, GuardType.CRC64, 1, true, 0, 0xbeef)),
                new Case("512+8 type 3", List.of("--format", "512+8", "--type", "3", "--ref-tag", "0x12345678", "--app-tag", "0x1234"),
                        new HandWrittenPi(512, 8, GuardType.CRC16, 3, false, 0x12345678, 0x1234)),
                new Case("4k+16 type 2, 48-bit ref tag wraps", List.of("--format", "4k+16", "--type", "2", "--ref-tag", "0xfffffffffff0"),
                        new HandWrittenPi(4096, 16, GuardType.CRC64, 2, false, 0xfffffffffff0L, 0)),
                new Case("512+16 crc16 PI last, 32-bit ref tag wraps", List.of("--format", "512+16", "--guard", "crc16", "--pi-location", "last",
                        "--ref-tag", "4294967290"),
                        new HandWrittenPi(512, 16, GuardType.CRC16, 1, true, 4294967290L, 0)),
                new Case("4096+32 crc32c PI last type 3", List.of("--format", "4096+32", "--guard", "crc32c", "--pi-location", "last",
                        "--type", "3", "--ref-tag", "0x1"),
                        new HandWrittenPi(4096, 32, GuardType.CRC32C, 3, true, 1, 0)),
                new Case("512+8 type 0", List.of("--format", "512+8", "--type", "0"),
                        new HandWrittenPi(512, 8, GuardType.CRC16, 0, false, 0, 0)));
    }

    // ------------------------------------------------------------------ generate / verify / strip

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void generateMatchesTheReferenceAndVerifiesClean(Case c) throws IOException {
        HandWrittenPi r = c.ref();
        int blocks = 23;
        byte[] raw = random(blocks * r.data, 7);
        Path in = write("raw.img", raw);
        Path out = dir.resolve("pi.img");
        // A small chunk size so that blocks (and ref tags) continue across several chunks.
        List<String> opts = new ArrayList<>(c.options());
        opts.addAll(List.of("--chunk-size", "10000"));

        Result g = run(prefixed("pi", "generate", opts, p(in), p(out)));
        assertEquals(0, g.code(), g.toString());
        assertTrue(g.out().startsWith("generated 23 blocks ("), g.toString());
        assertArrayEquals(r.interleaved(raw), Files.readAllBytes(out));

        Result v = run(prefixed("pi", "verify", opts, p(out)));
        assertEquals(0, v.code(), v.toString());
        assertEquals(List.of(), v.badLines());
        assertTrue(v.summary().matches("checked 23 blocks \\(.*\\): 0 bad"), v.summary());

        Path back = dir.resolve("back.img");
        Result s = run(prefixed("pi", "strip", opts, p(out), p(back)));
        assertEquals(0, s.code(), s.toString());
        assertArrayEquals(raw, Files.readAllBytes(back));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void separateMetadataMatchesTheReferenceAndVerifiesClean(Case c) throws IOException {
        HandWrittenPi r = c.ref();
        byte[] raw = random(9 * r.data, 11);
        Path in = write("raw.img", raw);
        Path meta = dir.resolve("raw.meta");
        Result g = run(prefixed("pi", "generate", c.options(), "--separate", p(in), p(meta)));
        assertEquals(0, g.code(), g.toString());
        assertArrayEquals(r.metadata(raw), Files.readAllBytes(meta));

        Result v = run(prefixed("pi", "verify", c.options(), "--separate", p(in), p(meta)));
        assertEquals(0, v.code(), v.toString());
        assertEquals("checked 9 blocks (" + format(c) + "): 0 bad", v.summary());
    }

    private static String format(Case c) {
        HandWrittenPi r = c.ref();
        return BlockFormat.of(r.data, r.meta, r.guard, PiType.of(r.type), r.last ? PiLocation.LAST : PiLocation.FIRST)
                .toString();
    }

    static String[] prefixed(String a, String b, List<String> opts, String... files) {
        List<String> l = new ArrayList<>();
        l.add(a);
        l.add(b);
        l.addAll(opts);
        l.addAll(Arrays.asList(files));
        return l.toArray(new String[0]);
    }

    @Test
    void emptyInputGivesEmptyOutputAndZeroBlocks() throws IOException {
        Path in = write("empty.img", new byte[0]);
        Path out = dir.resolve("pi.img");
        assertEquals(0, run("pi", "generate", "--format", "512+8", p(in), p(out)).code());
        assertEquals(0, Files.size(out));
        Result v = run("pi", "verify", "--format", "512+8", p(out));
        assertEquals(0, v.code(), v.toString());
        assertEquals("checked 0 blocks (512+8 type=1 guard=crc16 pi=first): 0 bad", v.summary());
    }

    // ------------------------------------------------------------------ corruption

    enum Field { DATA, GUARD, APP, REF }

    static Stream<Arguments> corruptions() {
        List<Arguments> l = new ArrayList<>();
        for (Case c : formats().filter(c -> c.ref().type != 0).collect(Collectors.toList())) {
            for (Field f : Field.values()) {
                if (f == Field.REF && c.ref().type == 3) {
                    continue; // Type 3 never checks the reference tag
                }
                l.add(Arguments.of(c, f, false));
                l.add(Arguments.of(c, f, true));
            }
        }
        return l.stream();
    }

    @ParameterizedTest(name = "{0}: flip {1}, separate={2}")
    @MethodSource("corruptions")
    void verifyNamesTheBadBlockAndField(Case c, Field field, boolean separate) throws IOException {
        HandWrittenPi r = c.ref();
        int blocks = 20;
        int bad = 13;
        byte[] raw = random(blocks * r.data, 3);
        byte[] il = r.interleaved(raw);
        int bs = r.data + r.meta;
        int block = bad * bs;
        int tuple = block + r.data + r.tupleOffset();
        long storedGuard = HandWrittenPi.get(il, tuple, r.guardBytes());
        String line;
        switch (field) {
            case DATA: {
                il[block + r.data / 2] ^= 0x10;
                long computed = r.guardOf(il, block);
                line = "lba=13 error=guard expected=" + HandWrittenPi.hex(computed, r.guardBytes())
                        + " actual=" + HandWrittenPi.hex(storedGuard, r.guardBytes());
                break;
            }
            case GUARD:
                il[tuple + r.guardBytes() - 1] ^= 0x01;
                line = "lba=13 error=guard expected=" + HandWrittenPi.hex(storedGuard, r.guardBytes())
                        + " actual=" + HandWrittenPi.hex(storedGuard ^ 1, r.guardBytes());
                break;
            case APP:
                il[tuple + r.appOffset() + 1] ^= 0x01;
                line = "lba=13 error=app expected=" + HandWrittenPi.hex(r.app, 2)
                        + " actual=" + HandWrittenPi.hex(r.app ^ 1, 2);
                break;
            default:
                il[tuple + r.refOffset() + r.refBytes() - 1] ^= 0x01;
                line = "lba=13 error=ref expected=" + HandWrittenPi.hex(r.refTag(bad), r.refBytes())
                        + " actual=" + HandWrittenPi.hex(r.refTag(bad) ^ 1, r.refBytes());
                break;
        }
        List<String> opts = new ArrayList<>(c.options());
        opts.addAll(List.of("--chunk-size", String.valueOf(3 * bs))); // block 13 sits in the fifth chunk
        Result v;
        if (separate) {
            byte[] data = new byte[blocks * r.data];
            byte[] meta = new byte[blocks * r.meta];
            for (int i = 0; i < blocks; i++) {
                System.arraycopy(il, i * bs, data, i * r.data, r.data);
                System.arraycopy(il, i * bs + r.data, meta, i * r.meta, r.meta);
            }
            v = run(prefixed("pi", "verify", opts, "--separate", p(write("d.img", data)), p(write("m.img", meta))));
        } else {
            v = run(prefixed("pi", "verify", opts, p(write("bad.img", il))));
        }
        assertEquals(1, v.code(), v.toString());
        assertEquals(List.of(line), v.badLines(), v.toString());
        assertEquals("checked 20 blocks (" + format(c) + "): 1 bad", v.summary());
    }

    /** Blocks 2, 5, 8, 11 and 14 with a bad guard, in four different chunks. */
    private Path fileWithFiveBadBlocks() throws IOException {
        HandWrittenPi r = new HandWrittenPi(512, 8, GuardType.CRC16, 1, false, 0, 0);
        byte[] il = r.interleaved(random(20 * 512, 5));
        for (int b = 2; b < 20; b += 3) {
            if (b <= 14) {
                il[b * 520 + 512] ^= (byte) 0x80;
            }
        }
        return write("five.img", il);
    }

    @Test
    void maxErrorsLimitsTheLinesButNotTheCount() throws IOException {
        Path f = fileWithFiveBadBlocks();
        Result all = run("pi", "verify", "--format", "512+8", "--chunk-size", "2000", p(f));
        assertEquals(1, all.code(), all.toString());
        assertEquals(List.of(2L, 5L, 8L, 11L, 14L), lbas(all));
        assertEquals("checked 20 blocks (512+8 type=1 guard=crc16 pi=first): 5 bad", all.summary());

        Result two = run("pi", "verify", "--format", "512+8", "--max-errors", "2", p(f));
        assertEquals(1, two.code(), two.toString());
        assertEquals(List.of(2L, 5L), lbas(two));
        assertEquals("checked 20 blocks (512+8 type=1 guard=crc16 pi=first): 5 bad (3 not shown, --max-errors 2)",
                two.summary());

        Result none = run("pi", "verify", "--format", "512+8", "--max-errors", "0", p(f));
        assertEquals(1, none.code(), none.toString());
        assertEquals(List.of(), none.badLines());
        assertTrue(none.summary().contains(": 5 bad (5 not shown"), none.summary());
    }

    private static List<Long> lbas(Result r) {
        return r.badLines().stream().map(l -> Long.parseLong(l.substring(4, l.indexOf(' '))))
                .collect(Collectors.toList());
    }

    @Test
    void checksChooseTheFieldsAndTheMaskTheAppTagBits() throws IOException {
        byte[] raw = random(8 * 512, 9);
        Path in = write("raw.img", raw);
        Path pi = dir.resolve("pi.img");
        assertEquals(0, run("pi", "generate", "--format", "512+8", "--ref-tag", "7", "--app-tag", "0x1234", p(in), p(pi))
                .code());

        Result wrongRef = run("pi", "verify", "--format", "512+8", "--ref-tag", "9", "--app-tag", "0x1234", p(pi));
        assertEquals(1, wrongRef.code(), wrongRef.toString());
        assertEquals("lba=0 error=ref expected=0x00000009 actual=0x00000007", wrongRef.badLines().get(0));
        assertEquals(8, wrongRef.badLines().size());

        Result noRef = run("pi", "verify", "--format", "512+8", "--ref-tag", "9", "--app-tag", "0x1234",
                "--checks", "guard,app", p(pi));
        assertEquals(0, noRef.code(), noRef.toString());
        assertEquals("checked 8 blocks (512+8 type=1 guard=crc16 pi=first, checks guard,app): 0 bad", noRef.summary());

        Result masked = run("pi", "verify", "--format", "512+8", "--ref-tag", "7", "--app-tag", "0x12ff",
                "--app-mask", "0xff00", p(pi));
        assertEquals(0, masked.code(), masked.toString());

        Result maskedBad = run("pi", "verify", "--format", "512+8", "--ref-tag", "7", "--app-tag", "0x13ff",
                "--app-mask", "0xff00", "--max-errors", "1", p(pi));
        assertEquals(1, maskedBad.code(), maskedBad.toString());
        assertEquals(List.of("lba=0 error=app expected=0x1300 actual=0x1200"), maskedBad.badLines());
    }

    @Test
    void typeThreeKeepsTheRefTagConstantAndDoesNotCheckIt() throws IOException {
        Path in = write("raw.img", random(4 * 512, 1));
        Path pi = dir.resolve("pi.img");
        assertEquals(0, run("pi", "generate", "--format", "512+8", "--type", "3", "--ref-tag", "7", p(in), p(pi)).code());
        byte[] b = Files.readAllBytes(pi);
        for (int i = 0; i < 4; i++) {
            assertEquals(7, HandWrittenPi.get(b, i * 520 + 512 + 4, 4), "ref tag of block " + i);
        }
        assertEquals(0, run("pi", "verify", "--format", "512+8", "--type", "3", "--ref-tag", "9", p(pi)).code());
        Result app = run("pi", "verify", "--format", "512+8", "--type", "3", "--app-tag", "1", p(pi));
        assertEquals(1, app.code(), app.toString());
        assertEquals(4, app.badLines().size());
    }

    // ------------------------------------------------------------------ strip

    @Test
    void stripRefusesBadInputAndLeavesNoOutput() throws IOException {
        Path f = fileWithFiveBadBlocks();
        Path out = dir.resolve("out.img");
        List<Path> before = listing();
        Result s = run("pi", "strip", "--format", "512+8", "--chunk-size", "1500", p(f), p(out));
        assertEquals(1, s.code(), s.toString());
        assertEquals(List.of(2L, 5L, 8L, 11L, 14L), lbas(s));
        assertEquals("checked 20 blocks (512+8 type=1 guard=crc16 pi=first): 5 bad", s.summary());
        assertEquals(1, s.errLines().size(), s.toString());
        assertTrue(s.err().contains("not written"), s.toString());
        assertFalse(Files.exists(out));
        assertEquals(before, listing(), "no output and no temporary file");

        // An existing OUT is left as it was.
        Files.write(out, new byte[] {1, 2, 3});
        assertEquals(1, run("pi", "strip", "--format", "512+8", p(f), p(out)).code());
        assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(out));
    }

    @Test
    void stripForceWritesTheDataAndStillReportsBadBlocks() throws IOException {
        HandWrittenPi r = new HandWrittenPi(4096, 16, GuardType.CRC64, 1, false, 0, 0);
        byte[] raw = random(6 * 4096, 2);
        byte[] il = r.interleaved(raw);
        il[4 * 4112 + 100] ^= 1; // data of block 4
        raw[4 * 4096 + 100] ^= 1;
        Path f = write("bad.img", il);
        Path out = dir.resolve("out.img");
        Result s = run("pi", "strip", "--format", "4096+16", "--force", p(f), p(out));
        assertEquals(1, s.code(), s.toString());
        assertEquals(1, s.badLines().size());
        assertTrue(s.badLines().get(0).startsWith("lba=4 error=guard "), s.toString());
        assertArrayEquals(raw, Files.readAllBytes(out));
    }

    private List<Path> listing() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().collect(Collectors.toList());
        }
    }

    // ------------------------------------------------------------------ chunks

    /** Several MiB through the default 1 MiB chunks and through tiny ones equal one in-memory insert. */
    @Test
    void multiChunkFilesEqualOneInMemoryInsert() throws IOException {
        BlockFormat f = BlockFormat.of(4096, 16);
        PiContext ctx = PiContext.builder(f).initialRefTag(5).appTag(0x77).build();
        int blocks = 3 * 256 + 41; // a bit over 3 MiB of data: 4 chunks of 1 MiB
        byte[] raw = random(blocks * 4096, 99);
        byte[] expected = new byte[blocks * f.blockSize()];
        Pi.insert(ctx, ScatterList.wrap(raw), ScatterList.wrap(expected), blocks);

        Path in = write("raw.img", raw);
        for (String chunk : List.of("1m", "12345", "1")) {
            Path out = dir.resolve("pi-" + chunk + ".img");
            Result g = run("pi", "generate", "--format", "4096+16", "--ref-tag", "5", "--app-tag", "0x77",
                    "--chunk-size", chunk, p(in), p(out));
            assertEquals(0, g.code(), g.toString());
            assertArrayEquals(expected, Files.readAllBytes(out), "chunk size " + chunk);
        }
        Path pi = dir.resolve("pi-1m.img");
        Result v = run("pi", "verify", "--format", "4096+16", "--ref-tag", "5", "--app-tag", "0x77", p(pi));
        assertEquals(0, v.code(), v.toString());
        Path back = dir.resolve("back.img");
        assertEquals(0, run("pi", "strip", "--format", "4096+16", "--ref-tag", "5", "--app-tag", "0x77",
                "--chunk-size", "100000", p(pi), p(back)).code());
        assertArrayEquals(raw, Files.readAllBytes(back));

        // Separate: the same metadata as one in-memory generate.
        byte[] meta = new byte[blocks * 16];
        Pi.generate(ctx, ScatterList.wrap(raw), ScatterList.wrap(meta), blocks);
        Path m = dir.resolve("raw.meta");
        assertEquals(0, run("pi", "generate", "--format", "4096+16", "--ref-tag", "5", "--app-tag", "0x77",
                "--separate", p(in), p(m)).code());
        assertArrayEquals(meta, Files.readAllBytes(m));
        assertEquals(0, run("pi", "verify", "--format", "4096+16", "--ref-tag", "5", "--app-tag", "0x77",
                "--separate", "--chunk-size", "5000", p(in), p(m)).code());
    }

    @Test
    void outputToADeviceIsWrittenInPlace() throws IOException {
        Path devNull = Path.of("/dev/null");
        assumeTrue(Files.exists(devNull) && !Files.isRegularFile(devNull));
        Path in = write("raw.img", random(4 * 512, 4));
        Result g = run("pi", "generate", "--format", "512+8", p(in), p(devNull));
        assertEquals(0, g.code(), g.toString());
        assertFalse(Files.isRegularFile(devNull), "/dev/null is still a device");
    }

    @Test
    void outputThroughASymlinkReplacesTheFileAndKeepsTheLink() throws IOException {
        byte[] raw = random(4 * 512, 4);
        Path in = write("raw.img", raw);
        Path real = write("real.img", new byte[] {9});
        Path link = Files.createSymbolicLink(dir.resolve("link.img"), real.getFileName());
        Result g = run("pi", "generate", "--format", "512+8", p(in), p(link));
        assertEquals(0, g.code(), g.toString());
        assertTrue(Files.isSymbolicLink(link), "the link stays a link");
        assertArrayEquals(new HandWrittenPi(512, 8, GuardType.CRC16, 1, false, 0, 0).interleaved(raw),
                Files.readAllBytes(real));
    }

    @Test
    void generateInPlaceReplacesTheInput() throws IOException {
        byte[] raw = random(3 * 4096, 12);
        Path f = write("same.img", raw);
        Result g = run("pi", "generate", "--format", "4096+8", p(f), p(f));
        assertEquals(0, g.code(), g.toString());
        assertArrayEquals(new HandWrittenPi(4096, 8, GuardType.CRC16, 1, false, 0, 0).interleaved(raw),
                Files.readAllBytes(f));
    }

    // ------------------------------------------------------------------ crc

    @Test
    void crcOfTheCheckString() throws IOException {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        Path f = write("check.txt", check);
        assertEquals(List.of("0xd0db"), run("pi", "crc", "--alg", "crc16", p(f)).outLines());
        assertEquals(List.of("0xe3069283"), run("pi", "crc", "--alg", "crc32c", p(f)).outLines());
        assertEquals(List.of("0xae8b14860a799888"), run("pi", "crc", "--alg", "crc64", p(f)).outLines());
        Result ip = run("pi", "crc", "--alg", "ip", p(f));
        assertEquals(0, ip.code());
        assertEquals(List.of(HandWrittenPi.hex(ReferenceGuards.ipChecksum(0, check, 0, check.length), 2)), ip.outLines());
    }

    @Test
    void crcStreamsFilesBiggerThanItsChunk() throws IOException {
        byte[] big = random((3 << 20) + 12345, 8);
        Path f = write("big.bin", big);
        CRC32C jdk = new CRC32C();
        jdk.update(big);
        assertEquals(List.of(String.format("0x%08x", jdk.getValue())), run("pi", "crc", "--alg", "crc32c", p(f)).outLines());
        assertEquals(List.of(HandWrittenPi.hex(ReferenceGuards.crc16(0, big, 0, big.length), 2)),
                run("pi", "crc", "--alg", "crc16", p(f)).outLines());
        assertEquals(List.of(HandWrittenPi.hex(ReferenceGuards.ipChecksum(0, big, 0, big.length), 2)),
                run("pi", "crc", "--alg", "ip", p(f)).outLines());
        assertEquals(List.of("0x0000000000000000"),
                run("pi", "crc", "--alg", "crc64", p(write("empty", new byte[0]))).outLines());
    }

    // ------------------------------------------------------------------ usage

    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of("unknown guard", List.of("pi", "generate", "--format", "512+8", "--guard", "md5", "RAW", "OUT")),
                Arguments.of("data size 4000", List.of("pi", "generate", "--format", "4000+8", "RAW", "OUT")),
                Arguments.of("16-byte PI on 512", List.of("pi", "generate", "--format", "512+16", "--guard", "crc32c", "RAW", "OUT")),
                Arguments.of("too little metadata", List.of("pi", "verify", "--format", "4096+8", "--guard", "crc64", "RAW")),
                Arguments.of("not a format", List.of("pi", "generate", "--format", "abc", "RAW", "OUT")),
                Arguments.of("format overflows", List.of("pi", "generate", "--format", "4194304k+8", "RAW", "OUT")),
                Arguments.of("type 5", List.of("pi", "generate", "--format", "512+8", "--type", "5", "RAW", "OUT")),
                Arguments.of("app tag too big", List.of("pi", "generate", "--format", "512+8", "--app-tag", "0x10000", "RAW", "OUT")),
                Arguments.of("ref tag too big", List.of("pi", "generate", "--format", "512+8", "--ref-tag", "0x100000000", "RAW", "OUT")),
                Arguments.of("ref tag not a number", List.of("pi", "generate", "--format", "512+8", "--ref-tag", "-1", "RAW", "OUT")),
                Arguments.of("bad location", List.of("pi", "generate", "--format", "512+8", "--pi-location", "middle", "RAW", "OUT")),
                Arguments.of("missing input", List.of("pi", "generate", "--format", "512+8", "NOPE", "OUT")),
                Arguments.of("input is a directory", List.of("pi", "verify", "--format", "512+8", "DIR")),
                Arguments.of("partial block", List.of("pi", "generate", "--format", "4096+8", "RAW", "OUT")),
                Arguments.of("partial interleaved block", List.of("pi", "verify", "--format", "512+8", "RAW")),
                Arguments.of("no output directory", List.of("pi", "generate", "--format", "512+8", "RAW", "NODIR/OUT")),
                Arguments.of("missing OUT", List.of("pi", "generate", "--format", "512+8", "RAW")),
                Arguments.of("missing --format", List.of("pi", "verify", "RAW")),
                Arguments.of("separate with one file", List.of("pi", "verify", "--format", "512+8", "--separate", "RAW")),
                Arguments.of("two files, interleaved", List.of("pi", "verify", "--format", "512+8", "RAW", "RAW")),
                Arguments.of("metadata for fewer blocks", List.of("pi", "verify", "--format", "512+8", "--separate", "RAW", "META")),
                Arguments.of("unknown check", List.of("pi", "verify", "--format", "512+8", "--checks", "guard,crc", "RAW")),
                Arguments.of("app mask not a number", List.of("pi", "verify", "--format", "512+8", "--app-mask", "xyz", "RAW")),
                Arguments.of("unknown option", List.of("pi", "strip", "--format", "512+8", "--frobnicate", "RAW", "OUT")),
                Arguments.of("unknown subcommand", List.of("pi", "frob")),
                Arguments.of("crc without --alg", List.of("pi", "crc", "RAW")),
                Arguments.of("crc unknown alg", List.of("pi", "crc", "--alg", "md5", "RAW")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("usageErrors")
    void usageErrorsAreOneLineAndExitTwo(String what, List<String> template) throws IOException {
        write("raw.img", random(1000, 1)); // for the "partial" cases: not a whole number of blocks
        write("raw512.img", random(1024, 1)); // two 512-byte blocks
        write("meta.img", new byte[8]);
        Files.createDirectories(dir.resolve("adir"));
        List<String> a = new ArrayList<>();
        for (String s : template) {
            switch (s) {
                case "RAW":
                    a.add(p(dir.resolve(what.startsWith("partial") ? "raw.img" : "raw512.img")));
                    break;
                case "META": a.add(p(dir.resolve("meta.img"))); break;
                case "OUT": a.add(p(dir.resolve("out.img"))); break;
                case "NOPE": a.add(p(dir.resolve("nope.img"))); break;
                case "DIR": a.add(p(dir.resolve("adir"))); break;
                case "NODIR/OUT": a.add(p(dir.resolve("nodir").resolve("out.img"))); break;
                default: a.add(s);
            }
        }
        Result r = run(a);
        assertEquals(2, r.code(), r.toString());
        assertEquals(1, r.errLines().size(), r.toString());
        assertTrue(r.err().startsWith("pistore pi"), r.toString());
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), r.toString());
        assertEquals("", r.out(), r.toString());
        assertFalse(Files.exists(dir.resolve("out.img")), "no output on a usage error");
        try (Stream<Path> s = Files.list(dir)) {
            assertTrue(s.noneMatch(x -> x.getFileName().toString().endsWith(".pistore-tmp")), "no temporary file left");
        }
    }

    @Test
    void noSubcommandPrintsUsageAndExitsTwo() {
        Result r = run();
        assertEquals(2, r.code());
        assertTrue(r.err().contains("Usage: pistore"), r.toString());
        Result pi = run("pi");
        assertEquals(2, pi.code());
        assertTrue(pi.err().contains("Usage: pistore pi"), pi.toString());
    }

    @Test
    void versionAndHelp() {
        Result v = run("--version");
        assertEquals(0, v.code());
        assertTrue(v.out().matches("pistore \\d+\\.\\d+\\.\\d+.*\\nguards: .*\\n"), v.toString());
        Result h = run("pi", "verify", "--help");
        assertEquals(0, h.code());
        assertTrue(h.out().contains("--max-errors"), h.toString());
        assertTrue(h.out().contains("--app-mask"), h.toString());
    }

    @Test
    void progressStaysOffWithoutATerminal() throws IOException {
        // Tests run without a console: stderr stays empty on success.
        Path in = write("raw.img", random(2048 * 512, 6));
        Result g = run("pi", "generate", "--format", "512+8", p(in), p(dir.resolve("pi.img")));
        assertEquals(0, g.code());
        assertEquals("", g.err());
    }

    @Test
    void progressLineIsErasedWhenShown() {
        StringWriter sw = new StringWriter();
        PrintWriter w = new PrintWriter(sw);
        try (Progress p = new Progress(w, "x", 100, true)) {
            p.advance(10);
        }
        // Too early to show (under a second): nothing printed, nothing to erase.
        assertEquals("", sw.toString());
        assertEquals("1.5 MiB", Progress.bytes(3 << 19));
        assertEquals("512 B", Progress.bytes(512));
    }

    @Test
    void hexIsPaddedToTheFieldWidth() {
        assertEquals("0x0000", BadBlockReport.hex(0, 4));
        assertEquals("0xffffffffffffffff", BadBlockReport.hex(-1L, 16));
        assertEquals("0x00001234", BadBlockReport.hex(0x1234, 8));
    }
}
