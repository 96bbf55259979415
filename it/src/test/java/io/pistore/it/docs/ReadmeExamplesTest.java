package io.pistore.it.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's tour runs as written: each command block of its "A short tour" runs in bash, in
 * order, from a directory whose {@code ./pistore} runs this build (the launcher itself would start
 * a Maven build inside this one); a block followed directly by an output block must print exactly
 * that. What differs from a user's run, and why: {@code /tmp/pistore-demo} is a directory of the
 * test, and the ports 4430, 10809 and 4520 free ones (a serve without {@code --listen} gets one too), so
 * that the test runs beside anything else on this machine; {@code CMD; echo "exit $?"} runs as {@code CMD && echo "exit 0" || echo "exit $?"} (same output,
 * while the rest of the block runs under {@code set -e}); bench durations are cut to one second and rounds to two (the figures are not checked, the
 * commands are). Nothing is waited for between the lines: a server starts with {@code serve --daemon},
 * which returns once it listens, and {@code stop} returns once it has exited. A block whose
 * tools (nbdinfo, qemu-img) are missing is skipped with a line saying so; {@code .ci/run} installs
 * them.
 */
@Timeout(600)
class ReadmeExamplesTest {
    private static final Pattern README_PORT = Pattern.compile(":(4430|10809|4520)\\b");
    private static final Pattern FENCE = Pattern.compile("(?m)^```[^\\n]*\\n(.*?)^```\\s*$", Pattern.DOTALL);

    @TempDir
    Path work;

    record Block(String section, String commands, String expected) {
    }

    static Path readme() {
        return Path.of(System.getProperty("user.dir")).getParent().resolve("README.md");
    }

    /** The tour's command blocks, each with the output block that follows it directly (or null). */
    static List<Block> tour(String readme) {
        int start = readme.indexOf("\n## A short tour");
        int end = readme.indexOf("\n## ", start + 1);
        String tour = readme.substring(start, end < 0 ? readme.length() : end);
        List<Block> blocks = new ArrayList<>();
        Matcher m = FENCE.matcher(tour);
        int prevEnd = -1;
        String section = "";
        while (m.find()) {
            String before = tour.substring(0, m.start());
            int h = before.lastIndexOf("\n### ");
            section = h < 0 ? section : before.substring(h + 5, before.indexOf('\n', h + 1));
            boolean follows = prevEnd >= 0 && tour.substring(prevEnd, m.start()).isBlank();
            if (follows && !blocks.isEmpty() && blocks.get(blocks.size() - 1).expected() == null) {
                Block last = blocks.remove(blocks.size() - 1);
                blocks.add(new Block(last.section(), last.commands(), m.group(1)));
            } else {
                blocks.add(new Block(section, m.group(1), null));
            }
            prevEnd = m.end();
        }
        return blocks;
    }

    @Test
    void theTourRunsAsWritten() throws Exception {
        List<Block> blocks = tour(Files.readString(readme()));
        assertTrue(blocks.size() >= 10, "the tour's blocks were found: " + blocks.size());
        writeLauncher();
        Path demo = work.resolve("pistore-demo");
        int tcpPort = freePort();
        int nbdPort = freePort();
        int rdmaPort = freePort();
        List<String> ran = new ArrayList<>();
        try {
            runAll(blocks, demo, tcpPort, nbdPort, rdmaPort, ran);
        } finally {
            stopLeftover(demo.resolve("serve.pid"));
        }
        assertTrue(ran.contains("The `pi` tool") && ran.contains("Volumes, a target, and a scrub"), ran.toString());
        System.out.println("[readme] ran " + ran.size() + " of " + blocks.size() + " blocks");
    }

    /** A server that a failed block left running (its pid file is still there): SIGKILL, so the test ends. */
    static void stopLeftover(Path pidFile) throws IOException {
        if (Files.exists(pidFile)) {
            ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private void runAll(List<Block> blocks, Path demo, int tcpPort, int nbdPort, int rdmaPort, List<String> ran)
            throws IOException, InterruptedException {
        for (Block b : blocks) {
            String missing = missingTool(b.commands());
            if (missing != null) {
                System.out.println("[readme] skipped a block of '" + b.section() + "': " + missing + " is not installed");
                continue;
            }
            String script = script(b.commands(), demo, tcpPort, nbdPort, rdmaPort);
            Ran r = bash(script);
            String where = "README section '" + b.section() + "', block:\n" + b.commands() + "\noutput:\n" + r.output;
            assertEquals(0, r.code, where);
            if (b.expected() != null) {
                assertEquals(b.expected().strip(), r.output.strip(), where);
            }
            ran.add(b.section());
        }
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** {@code ./pistore} in the work directory: this build's CLI on the test's class path. */
    private void writeLauncher() throws IOException {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String launcher = "#!/usr/bin/env bash\nexec '" + java + "' -Xss1m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
                + " --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp '" + System.getProperty("java.class.path")
                + "' io.pistore.app.cli.Main \"$@\"\n";
        Path p = work.resolve("pistore");
        Files.writeString(p, launcher);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static String missingTool(String commands) {
        for (String tool : List.of("nbdinfo", "qemu-img")) {
            if (Pattern.compile("(?m)^" + tool + " ").matcher(commands).find() && !onPath(tool)) {
                return tool;
            }
        }
        return null;
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    /** The block as bash runs it here (see the class comment for each change). */
    static String script(String commands, Path demo, int tcpPort, int nbdPort, int rdmaPort) {
        StringBuilder s = new StringBuilder("set -e\n");
        for (String line : commands.split("\n")) {
            // one pass, so that a free port that contains another's digits is not replaced again
            Matcher ports = README_PORT.matcher(line.replace("/tmp/pistore-demo", demo.toString()));
            String l = ports.replaceAll(m -> ":" + switch (m.group(1)) {
                case "4430" -> tcpPort;
                case "10809" -> nbdPort;
                default -> rdmaPort;
            });
            if (l.startsWith("./pistore serve") && !l.contains("--listen") && !l.contains("--nbd")) {
                l = l.replace("./pistore serve", "./pistore serve --listen 127.0.0.1:" + tcpPort);
            }
            if (l.startsWith("./pistore bench")) {
                l = l.replaceAll("--seconds \\d+", "--seconds 1").replaceAll("--rounds \\d+", "--rounds 2");
            }
            // "CMD; echo "exit $?"" shows a failing command's code: the same without set -e ending the block
            l = l.replace("; echo \"exit $?\"", " && echo \"exit 0\" || echo \"exit $?\"");
            s.append(l).append('\n');
        }
        return s.toString();
    }

    record Ran(int code, String output) {
    }

    private Ran bash(String script) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script).directory(work.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("block did not end within 300 s:\n" + script);
        }
        return new Ran(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
