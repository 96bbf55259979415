package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The target as real initiators see it: libiscsi's tools (iscsi-ls, iscsi-inq,
 * iscsi-readcapacity16), QEMU's iSCSI driver, a C program against libiscsi's API that checks every
 * protect value with correct and wrong PI, and libiscsi's conformance suite. Each test is skipped,
 * with the reason, where its client is not installed (.ci/run installs them).
 */
@Timeout(300)
class IscsiClientsTest extends IscsiLoopbackFixture {
    /** iscsi-test-cu tests that fail against this target, each with its reason in docs/ISCSI.md. */
    static final Set<String> KNOWN_FAILING = Set.of("iSCSIdatasn.iSCSIDataSnInvalid");

    @Override
    void createVolumes() throws IOException {
        store.create("a", BlockFormat.of(4096, 8), 16384);
        store.create("b", BlockFormat.of(512, 8), 131072);
        store.create("c", BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_3, PiLocation.FIRST), 8192);
        store.create("plain", BlockFormat.of(512, 0), 32768);
    }

    String portal() {
        return "iscsi://127.0.0.1:" + server.address().getPort();
    }

    String url(String volume) {
        return portal() + "/" + IscsiServer.targetName(volume) + "/0";
    }

    record Ran(int code, String out) { }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    static void need(String tool, String pkg) {
        assumeTrue(onPath(tool), tool + " is not installed (Debian package " + pkg + ")");
    }

    /** A client started and not yet waited for: its output goes to {@code out}. */
    record Running(Process process, Path out, String command) {
        Ran finish() throws IOException, InterruptedException {
            if (!process.waitFor(540, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(command + " did not end in 540 s");
            }
            return new Ran(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        }
    }

    Running start(Path cwd, String... cmd) throws IOException {
        Path out = Files.createTempFile(dir, "out", ".txt");
        Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        return new Running(p, out, String.join(" ", cmd));
    }

    Ran run(Path cwd, String... cmd) throws IOException, InterruptedException {
        return start(cwd, cmd).finish();
    }

    Ran run(String... cmd) throws IOException, InterruptedException {
        return run(dir, cmd);
    }

    @Test
    void discoveryListsEveryVolumeAsATarget() throws Exception {
        need("iscsi-ls", "libiscsi-bin");
        Ran r = run("iscsi-ls", "-s", portal());
        assertEquals(0, r.code(), r.out());
        for (String v : List.of("a", "b", "c", "plain")) {
            assertTrue(r.out().contains("Target:" + IscsiServer.targetName(v) + " Portal:127.0.0.1:"
                    + server.address().getPort() + ",1"), r.out());
        }
        assertTrue(r.out().contains("Lun:0    Type:DIRECT_ACCESS"), r.out());
    }

    @Test
    void inquiryAndReadCapacityShowTheProtection() throws Exception {
        need("iscsi-inq", "libiscsi-bin");
        Ran pi = run("iscsi-inq", url("b"));
        assertEquals(0, pi.code(), pi.out());
        assertTrue(pi.out().contains("Protect:1"), pi.out());
        Ran plain = run("iscsi-inq", url("plain"));
        assertTrue(plain.out().contains("Protect:0"), plain.out());

        Ran b = run("iscsi-readcapacity16", url("b"));
        assertEquals(0, b.code(), b.out());
        assertTrue(b.out().contains("LOGICAL BLOCK LENGTH IN BYTES:512"), b.out());
        assertTrue(b.out().contains("P_TYPE:0 PROT_EN:1"), b.out());
        assertTrue(b.out().contains("P_I_EXPONENT:0"), b.out());
        Ran a = run("iscsi-readcapacity16", url("a"));
        assertTrue(a.out().contains("LOGICAL BLOCK LENGTH IN BYTES:4096") && a.out().contains("P_TYPE:0 PROT_EN:1"), a.out());
        Ran c = run("iscsi-readcapacity16", url("c"));
        assertTrue(c.out().contains("P_TYPE:2 PROT_EN:1"), c.out());
        Ran p = run("iscsi-readcapacity16", url("plain"));
        assertTrue(p.out().contains("PROT_EN:0") && p.out().contains("LBPME:1 LBPRZ:1"), p.out());
    }

    @ParameterizedTest
    @CsvSource({"plain", "a", "b"})
    void qemuImgConvertsInAndOutByteForByte(String volume) throws Exception {
        need("qemu-img", "qemu-utils and qemu-block-extra");
        byte[] image = new byte[8 << 20];
        new Random(volume.hashCode()).nextBytes(image);
        Path in = dir.resolve("in.raw");
        Files.write(in, image);
        Ran w = run("qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", in.toString(), url(volume));
        assumeTrue(!w.out().contains("Unknown protocol"), "qemu-img has no iSCSI driver (qemu-block-extra): " + w.out());
        assertEquals(0, w.code(), w.out());
        Path out = dir.resolve("out.raw");
        Ran r = run("qemu-img", "convert", "-f", "raw", "-O", "raw", url(volume), out.toString());
        assertEquals(0, r.code(), r.out());
        byte[] back = Files.readAllBytes(out);
        assertArrayEquals(image, java.util.Arrays.copyOf(back, image.length));
    }

    /** Builds the PI checker against libiscsi with gcc; skipped with the reason where either is missing. */
    Path piChecker() throws Exception {
        need("gcc", "gcc");
        assumeTrue(Files.exists(Path.of("/usr/include/iscsi/iscsi.h")), "libiscsi's headers are not installed (libiscsi-dev)");
        Path src = Path.of("src/test/c/pi_check.c").toAbsolutePath();
        Path exe = dir.resolve("pi_check");
        Ran cc = run("gcc", "-Wall", "-Werror", "-O1", "-o", exe.toString(), src.toString(), "-liscsi");
        assertEquals(0, cc.code(), "gcc: " + cc.out());
        return exe;
    }

    @ParameterizedTest
    @CsvSource({"b, 1", "a, 1", "c, 3"})
    void everyProtectValueCarriesAndChecksThePi(String volume, int type) throws Exception {
        Path exe = piChecker();
        Ran r = run(exe.toString(), url(volume), Integer.toString(type));
        assertTrue(r.out().contains("\n0 failure(s)"), r.out());
        assertEquals(0, r.code(), r.out());
        assertTrue(r.out().lines().filter(l -> l.startsWith("PASS ")).count() >= (type == 1 ? 55 : 52), r.out());
        assertTrue(r.out().contains("PASS COMPARE AND WRITE with WRPROTECT 1 stores the write instance"), r.out());
        assertTrue(r.out().contains("PASS a differing application tag is a MISCOMPARE (10h/02h) at its LBA"), r.out());
        assertTrue(r.out().contains("PASS RDPROTECT 1 of that block fails its guard check"), r.out());
        assertTrue(r.out().contains("PASS a 64 KiB WRPROTECT 1 write with a wrong guard near its end is refused"), r.out());
        assertTrue(log.stream().anyMatch(l -> l.contains("pi-check logged in") && l.contains("header digest")), log.toString());
    }

    /** A suite's name, or the name of a test that failed, in CUnit's XML results. */
    static final Pattern CUNIT_RECORD = Pattern.compile(
            "<SUITE_NAME> (\\S+) </SUITE_NAME>|<CUNIT_RUN_TEST_FAILURE>\\s*<TEST_NAME> (\\S+) </TEST_NAME>");

    /** How many runs of the suite share each format's suites, each on a unit of its own. */
    static final int SHARDS = 2;

    /**
     * libiscsi's conformance suite, data-destroying tests included, against 512+8 Type 1 units and
     * 4096+8 ones at the same time: each format's suites (the family {@code ALL}, which holds every
     * test once; the tool's default also runs its SCSI, iSCSI and LINUX families, which only repeat
     * tests of {@code ALL}) are dealt in turn to {@link #SHARDS} runs, each on a unit (a target) of
     * its own, so every test runs once on each format and no run's resets, reservations or unit
     * attentions reach another (the suite mostly waits, on the target's fsyncs and on its own
     * protocol timeouts). Each run names its unit twice: two sessions, the two paths of the
     * multipath tests. Every test but the known failures passes (a skip counts as a pass, as CUnit
     * counts it), and the server stays up.
     */
    @Test
    @Timeout(600) // the suite on 4096+8 blocks moves far more data than any other test here
    void conformanceSuitePassesButTheKnownFailures() throws Exception {
        need("iscsi-test-cu", "libiscsi-bin");
        Ran listed = run("iscsi-test-cu", "-l");
        List<String> suites = listed.out().lines().filter(l -> l.matches("ALL\\.[^.\\s]+")).toList();
        assertTrue(suites.size() >= 50, "iscsi-test-cu -l lists " + suites.size() + " suites of ALL:\n" + tail(listed.out()));
        for (int k = 1; k < SHARDS; k++) { // the first shard of each format is "b" or "a"
            store.create("b" + k, BlockFormat.of(512, 8), 131072);
            store.create("a" + k, BlockFormat.of(4096, 8), 16384);
        }
        serve(options()); // the server takes the new units
        Map<String, List<String>> units = new LinkedHashMap<>(); // by format
        Map<String, List<Running>> runs = new LinkedHashMap<>();
        for (String format : List.of("b", "a")) {
            for (int k = 0; k < SHARDS; k++) {
                String unit = k == 0 ? format : format + k;
                List<String> dealt = new ArrayList<>();
                for (int i = k; i < suites.size(); i += SHARDS) {
                    dealt.add(suites.get(i));
                }
                Path work = Files.createDirectories(dir.resolve("cu-" + unit));
                units.computeIfAbsent(format, f -> new ArrayList<>()).add(unit);
                runs.computeIfAbsent(format, f -> new ArrayList<>())
                        .add(start(work, "iscsi-test-cu", "-d", "-x", "-t", String.join(",", dealt), url(unit), url(unit)));
            }
        }
        Map<String, List<Ran>> ran = new LinkedHashMap<>();
        for (Map.Entry<String, List<Running>> e : runs.entrySet()) {
            for (Running r : e.getValue()) {
                ran.computeIfAbsent(e.getKey(), f -> new ArrayList<>()).add(r.finish());
            }
        }
        List<org.junit.jupiter.api.function.Executable> checks = new ArrayList<>();
        for (String format : units.keySet()) {
            checks.add(() -> conformanceResults(format, units.get(format), ran.get(format)));
        }
        org.junit.jupiter.api.Assertions.assertAll(checks);
    }

    /**
     * The results of one format's runs (units {@code units}, outputs {@code outs}) together: at
     * least 50 suites and 220 passed tests, no failure but the known ones, every unit still answering.
     */
    void conformanceResults(String format, List<String> units, List<Ran> outs) throws Exception {
        Set<String> failed = new TreeSet<>();
        int suites = 0;
        int passed = 0;
        StringBuilder said = new StringBuilder();
        for (int u = 0; u < units.size(); u++) {
            Path xml = dir.resolve("cu-" + units.get(u)).resolve("CUnitAutomated-Results.xml");
            said.append(units.get(u)).append(" said:\n").append(tail(outs.get(u).out())).append('\n');
            assertTrue(Files.exists(xml), units.get(u) + ": no CUnit results; the suite said:\n" + tail(outs.get(u).out()));
            String results = Files.readString(xml, StandardCharsets.UTF_8);
            String suite = "";
            Matcher m = CUNIT_RECORD.matcher(results);
            while (m.find()) {
                if (m.group(1) != null) {
                    suite = m.group(1);
                    suites++;
                } else {
                    failed.add(suite + "." + m.group(2));
                }
            }
            passed += results.split("<CUNIT_RUN_TEST_SUCCESS>", -1).length - 1;
        }
        assertTrue(suites >= 50 && passed >= 220, format + ": " + suites + " suites, " + passed + " tests passed:\n" + said);
        Set<String> unexpected = new TreeSet<>(failed);
        unexpected.removeAll(KNOWN_FAILING);
        assertEquals(Set.of(), unexpected, format + ": unexpected failures; the suites said:\n" + said);
        for (String unit : units) {
            Ran after = run("iscsi-inq", url(unit));
            assertEquals(0, after.code(), "the server answers after the suite: " + after.out());
        }
    }

    static String tail(String s) {
        List<String> lines = new ArrayList<>(s.lines().toList());
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }
}
