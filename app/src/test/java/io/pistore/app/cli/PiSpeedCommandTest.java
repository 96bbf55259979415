package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.GuardPath;
import io.pistore.integrity.GuardType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code pistore pi speed} and the guard-path line of {@code --version}. */
class PiSpeedCommandTest {
    static final Pattern LINE = Pattern.compile(
            "path=(native|java) op=(generate|verify) format=\\d+\\+\\d+ guard=(crc16|ip|crc32c|crc64) gbps=\\d+\\.\\d{2,5}");

    record Result(int code, String out, String err) {
        List<String> lines() {
            return out.isEmpty() ? List.of() : Arrays.asList(out.split("\n"));
        }
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void onePerPathAndOperation() {
        Result r = run("pi", "speed", "--format", "512+8", "--seconds", "0.05");
        assertEquals(0, r.code(), r.toString());
        List<String> lines = r.lines();
        boolean nat = GuardType.CRC16.hasNativePath();
        assertEquals(nat ? 4 : 2, lines.size(), r.toString());
        for (String l : lines) {
            assertTrue(LINE.matcher(l).matches(), l);
            assertTrue(l.contains("format=512+8 guard=crc16"), l);
        }
        List<String> order = new ArrayList<>();
        for (String l : lines) {
            order.add(l.substring(0, l.indexOf(" format=")));
        }
        List<String> want = new ArrayList<>();
        if (nat) {
            want.addAll(List.of("path=native op=generate", "path=native op=verify"));
        }
        want.addAll(List.of("path=java op=generate", "path=java op=verify"));
        assertEquals(want, order);
        for (String l : lines) {
            assertTrue(Double.parseDouble(l.substring(l.indexOf("gbps=") + 5)) > 0, l);
        }
        // stderr names the kernel bound to each guard (or why the path is not native)
        assertTrue(r.err().contains("pi speed: " + GuardPath.describe()), r.err());
        assertTrue(r.err().contains(nat ? "crc16=native(" : "crc16=java"), r.err());
    }

    @Test
    void guardAndPathOptions() {
        Result r = run("pi", "speed", "--format", "4096+16", "--guard", "crc32c", "--path", "java", "--seconds",
                "0.03", "--memory", "heap");
        assertEquals(0, r.code(), r.toString());
        assertEquals(2, r.lines().size(), r.toString());
        assertTrue(r.lines().get(0).startsWith("path=java op=generate format=4096+16 guard=crc32c gbps="), r.out());
        Result ip = run("pi", "speed", "--format", "512+8", "--guard", "ip", "--seconds", "0.03");
        assertEquals(0, ip.code(), ip.toString());
        assertEquals(2, ip.lines().size(), ip.toString()); // no native IP checksum: java only, and a note
        assertTrue(ip.err().contains("no native path for guard ip"), ip.err());
        Result nat = run("pi", "speed", "--format", "4096+16", "--path", "native", "--seconds", "0.03");
        if (GuardType.CRC64.hasNativePath()) {
            assertEquals(0, nat.code(), nat.toString());
            assertTrue(nat.lines().stream().allMatch(l -> l.startsWith("path=native ")), nat.out());
        } else {
            assertEquals(2, nat.code(), nat.toString());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"--path=both", "--seconds=0", "--seconds=x", "--format=512+0", "--format=12+8",
        "--guard=md5", "--memory=gpu", "--bogus"})
    void usageErrorsExit2InOneLine(String arg) {
        Result r = arg.startsWith("--seconds") ? run("pi", "speed", arg, "--format=512+8")
                : run("pi", "speed", arg, "--seconds", "0.01");
        assertEquals(2, r.code(), r.toString());
        assertEquals("", r.out());
        assertEquals(1, r.err().strip().split("\n").length, r.err());
        assertTrue(r.err().startsWith("pistore pi speed: "), r.err());
    }

    @Test
    void nativeUnavailableIsAUsageErrorAndJavaStillWorks() throws Exception {
        // Separate JVMs with the native path switched off, started together: --path java measures,
        // --path native refuses.
        Forked javaPath = fork("-Dpistore.native=false", "pi", "speed", "--format", "4096+8", "--path", "java",
                "--seconds", "0.05");
        Forked bothPaths = fork("-Dpistore.native=false", "pi", "speed", "--format", "4096+8", "--seconds", "0.02");
        Forked nativePath = fork("-Dpistore.native=false", "pi", "speed", "--path", "native", "--seconds", "0.02");
        Forked version = fork("-Dpistore.native=false", "--version");
        Result j = javaPath.result();
        assertEquals(0, j.code(), j.toString());
        assertEquals(2, j.lines().size(), j.toString());
        assertTrue(j.lines().stream().allMatch(l -> LINE.matcher(l).matches() && l.startsWith("path=java ")),
                j.out());
        Result all = bothPaths.result();
        assertEquals(0, all.code(), all.toString());
        assertEquals(2, all.lines().size(), all.toString());
        Result n = nativePath.result();
        assertEquals(2, n.code(), n.toString());
        assertEquals(1, n.err().strip().split("\n").length, n.err());
        assertTrue(n.err().contains("disabled by system property pistore.native=false"), n.err());
        Result v = version.result();
        assertEquals(0, v.code(), v.toString());
        assertTrue(v.out().contains("guards: pure Java (native unavailable: disabled by system property"), v.out());
    }

    @Test
    void versionSaysWhichGuardPath() {
        Result v = run("--version");
        assertEquals(0, v.code());
        assertEquals(2, v.lines().size(), v.out());
        assertEquals(GuardPath.describe(), v.lines().get(1));
        assertTrue(v.lines().get(1).startsWith(GuardPath.isNative() ? "guards: native" : "guards: pure Java"));
        Result pv = run("pi", "--version");
        assertEquals(0, pv.code());
        assertEquals(v.out(), pv.out());
    }

    /** A forked pistore whose output is read on threads of its own; {@link #result} waits for its end. */
    private record Forked(Process process, ByteArrayOutputStream out, ByteArrayOutputStream err, Thread[] readers) {
        Result result() throws InterruptedException {
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "forked pistore did not finish");
            for (Thread t : readers) {
                t.join();
            }
            return new Result(process.exitValue(), out.toString(StandardCharsets.UTF_8),
                    err.toString(StandardCharsets.UTF_8));
        }
    }

    private static Forked fork(String jvmArg, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-XX:TieredStopAtLevel=1"); // a short run: C2's compiles would only cost CPU
        cmd.add(jvmArg);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Main.class.getName());
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread[] readers = {new Thread(() -> copy(p.getInputStream(), out)),
            new Thread(() -> copy(p.getErrorStream(), err))};
        for (Thread t : readers) {
            t.start();
        }
        return new Forked(p, out, err, readers);
    }

    private static void copy(InputStream in, ByteArrayOutputStream to) {
        try {
            in.transferTo(to);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
