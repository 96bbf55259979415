package io.pistore.it.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.it.CliJvm;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The command blocks of a document, run in bash as written, in order, from a work directory whose
 * {@code ./pistore} runs this build's CLI (the launcher itself would start a Maven build inside this
 * one). A command block is a plain fence whose first line is a command ({@code ./pistore},
 * {@code curl}, a tool); a plain fence right after one is its output, which must be printed exactly.
 * What differs from a user's run, and why: the {@code /tmp} directories of the document are
 * directories of the test, and its well-known ports free ones, so that the test runs beside anything
 * else on this machine (a serve without {@code --listen} or {@code --nbd} gets the tcp one); {@code CMD;
 * echo "exit $?"} runs as {@code CMD && echo "exit 0" || echo "exit $?"} (same output, while the
 * rest of the block runs under {@code set -e}); bench durations are cut to one second, rounds to
 * two, the warm-up to none, and an embedded target's volume to 64 MiB (less to prefill) unless the
 * line gives a size, and a bench's second lasts {@value #BENCH_SECOND_MS} ms (bench's
 * {@code pistore.bench.second.ms}; the figures are not checked, the commands are). Nothing is waited for between
 * the lines: a server starts with {@code serve --daemon}, which returns once it listens, and
 * {@code stop} returns once it has exited. A line whose tool (nbdinfo, qemu-img, curl, libiscsi's
 * iscsi-inq and iscsi-readcapacity16) is missing is left out with a line saying so; {@code .ci/run}
 * installs them. A document may ask for more ({@link Options}): its {@code sh} fences run too, the
 * files it shows by name are saved before the blocks that use them, and its outputs are compared
 * without the figures that differ from run to run. The blocks run as in one shell: a variable one
 * sets is there for the next.
 */
final class DocBlocks {
    private static final Pattern FENCE = Pattern.compile("(?m)^```([^\\n]*)\\n(.*?)^```\\s*$", Pattern.DOTALL);
    private static final Pattern COMMAND = Pattern.compile("^(\\./pistore |curl |nbdinfo |qemu-img |head |printf |od |mkdir |[A-Z]=)");
    private static final List<String> TOOLS = List.of("nbdinfo", "qemu-img", "curl", "iscsi-inq", "iscsi-readcapacity16");

    record Block(String section, String commands, String expected, String file) {
        Block(String section, String commands, String expected) {
            this(section, commands, expected, null);
        }
    }

    /**
     * How a document runs: {@code shellFences} makes {@code sh} fences command blocks too, whatever
     * their first line, and a fence whose first line names a file ({@code # target.properties: ...})
     * a file the reader saves under that name; {@code looseFigures} compares outputs with their
     * figures, peer numbers and Raft roles left out (log indexes, which peer leads and in which
     * order the peers answer differ from run to run; "exit N" lines are compared whole);
     * {@code tools}: a block that runs one of them that is not installed is skipped, with a line saying so.
     */
    record Options(boolean shellFences, boolean looseFigures, List<String> tools) {
        static final Options PLAIN = new Options(false, false, List.of());
    }

    private static final Pattern FILE_BLOCK = Pattern.compile("^# ([\\w.-]+\\.(?:properties|ya?ml|txt))(?:[:;].*)?\\n");

    private DocBlocks() {
    }

    static Path doc(String relative) {
        return Path.of(System.getProperty("user.dir")).getParent().resolve(relative);
    }

    /** The command blocks of {@code text}, each with the output block that follows it directly (or null). */
    static List<Block> blocks(String text) {
        return blocks(text, Options.PLAIN);
    }

    /** The command and file blocks of {@code text}, each command with the output block that follows it directly (or null). */
    static List<Block> blocks(String text, Options options) {
        List<Block> blocks = new ArrayList<>();
        Matcher m = FENCE.matcher(text);
        int prevEnd = -1;
        boolean prevCommand = false;
        String section = "";
        while (m.find()) {
            String before = text.substring(0, m.start());
            int h = Math.max(before.lastIndexOf("\n## "), before.lastIndexOf("\n### "));
            section = h < 0 ? section : before.substring(before.indexOf(' ', h) + 1, before.indexOf('\n', h + 1));
            boolean plain = m.group(1).isBlank();
            boolean shell = options.shellFences() && m.group(1).strip().equals("sh");
            boolean follows = prevEnd >= 0 && text.substring(prevEnd, m.start()).isBlank();
            String body = m.group(2);
            Matcher file = FILE_BLOCK.matcher(body);
            if (plain && follows && prevCommand && blocks.get(blocks.size() - 1).expected() == null) {
                Block last = blocks.remove(blocks.size() - 1);
                blocks.add(new Block(last.section(), last.commands(), body));
                prevCommand = false;
            } else if (options.shellFences() && !shell && file.lookingAt()) {
                blocks.add(new Block(section, body, null, file.group(1)));
                prevCommand = false;
            } else if (shell || plain && COMMAND.matcher(body).find()) {
                blocks.add(new Block(section, body, null));
                prevCommand = true;
            } else {
                prevCommand = false;
            }
            prevEnd = m.end();
        }
        return blocks;
    }

    /** The length of a bench's second in the documents' runs. */
    static final int BENCH_SECOND_MS = 200;

    /** {@code ./pistore} in {@code work}: this build's CLI, started as {@link CliJvm} says. */
    static void writeLauncher(Path work) throws IOException {
        StringBuilder launcher = new StringBuilder("#!/usr/bin/env bash\nexec");
        for (String a : CliJvm.command(List.of("-Dpistore.bench.second.ms=" + BENCH_SECOND_MS))) {
            launcher.append(" '").append(a).append('\'');
        }
        launcher.append(" \"$@\"\n");
        Path p = work.resolve("pistore");
        Files.writeString(p, launcher.toString());
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The block as bash runs it here: {@code dirs} maps a document's directory to the test's,
     * {@code ports} a document's port to a free one (after a colon, or a bare {@code --metrics} port).
     */
    static String script(String commands, Map<String, Path> dirs, Map<Integer, Integer> ports, int tcpPort) {
        StringBuilder s = new StringBuilder("set -e\n");
        Pattern port = Pattern.compile("(?<=:|--metrics |port=)(" + String.join("|",
                ports.keySet().stream().map(String::valueOf).toList()) + ")\\b");
        for (String line : commands.split("\n")) {
            String l = line;
            for (Map.Entry<String, Path> d : dirs.entrySet()) {
                l = l.replace(d.getKey(), d.getValue().toString());
            }
            // one pass, so that a free port that contains another's digits is not replaced again
            l = port.matcher(l).replaceAll(m -> String.valueOf(ports.get(Integer.parseInt(m.group(1)))));
            if (l.startsWith("./pistore serve") && !l.contains("--listen") && !l.contains("--nbd")) {
                l = l.replace("./pistore serve", "./pistore serve --listen 127.0.0.1:" + tcpPort);
            }
            if (l.startsWith("./pistore bench")) {
                l = l.replaceAll("--seconds \\d+", "--seconds 1").replaceAll("--rounds \\d+", "--rounds 2");
                boolean sized = l.contains("--target") || l.contains("--data") || l.contains("--size");
                String cut = (l.contains("--ramp") ? "" : " --ramp 0") + (sized ? "" : " --size 64MiB");
                l = l.replaceFirst("^\\./pistore bench", "./pistore bench" + cut);
            }
            // "CMD; echo "exit $?"" shows a failing command's code: the same without set -e ending the block
            l = l.replace("; echo \"exit $?\"", " && echo \"exit 0\" || echo \"exit $?\"");
            String tool = l.isBlank() ? "" : l.strip().split("\\s+")[0];
            if (TOOLS.contains(tool) && !onPath(tool)) {
                System.out.println("[docs] left out, " + tool + " is not installed: " + line);
                continue;
            }
            s.append(l).append('\n');
        }
        return s.toString();
    }

    record Ran(int code, String output) {
    }

    static Ran bash(Path work, String script) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script).directory(work.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("block did not end within 300 s:\n" + script);
        }
        return new Ran(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Runs every block in order; returns the sections run. */
    static List<String> runAll(String doc, List<Block> blocks, Path work, Map<String, Path> dirs,
                               Map<Integer, Integer> ports, int tcpPort) throws IOException, InterruptedException {
        return runAll(doc, blocks, work, dirs, ports, tcpPort, Options.PLAIN);
    }

    /**
     * Runs every block in order, as one shell would: a variable a block sets ({@code P=...} on a line
     * of its own) is set for the blocks after it; a file block is saved in {@code work}. Returns the
     * sections run (a skipped block's too).
     */
    static List<String> runAll(String doc, List<Block> blocks, Path work, Map<String, Path> dirs,
                               Map<Integer, Integer> ports, int tcpPort, Options options)
            throws IOException, InterruptedException {
        List<String> ran = new ArrayList<>();
        StringBuilder variables = new StringBuilder();
        String skipped = null;
        for (Block b : blocks) {
            if (b.file() != null) {
                Files.writeString(work.resolve(b.file()), map(b.commands(), dirs, ports));
                ran.add(b.section());
                continue;
            }
            String missing = options.tools().stream()
                    .filter(t -> Pattern.compile("(?m)^\\s*" + Pattern.quote(t) + "\\s").matcher(b.commands()).find())
                    .filter(t -> !onPath(t)).findFirst().orElse(null);
            if (missing != null) {
                System.out.println("[docs] " + doc + " section '" + b.section() + "': block skipped, " + missing
                        + " is not installed");
                skipped = "section '" + b.section() + "' was skipped (" + missing + " is not installed)";
                ran.add(b.section());
                continue;
            }
            String body = script(b.commands(), dirs, ports, tcpPort);
            long t0 = System.nanoTime();
            Ran r = bash(work, variables + body);
            System.out.println("[docs] " + doc + " section '" + b.section() + "': " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            String where = doc + " section '" + b.section() + "', block:\n" + b.commands() + "\noutput:\n" + r.output();
            if (r.code() != 0) {
                where += serverLogs(dirs.values());
                // A later block may need what a skipped one made (a data directory, a volume): not a
                // failure of the page then, and CI, which installs every tool, skips none.
                assumeTrue(skipped == null, skipped + " and a later block failed: " + where);
            }
            assertEquals(0, r.code(), where);
            if (b.expected() != null) {
                String expected = map(b.expected(), dirs, ports).strip();
                if (options.looseFigures()) {
                    assertEquals(loose(expected), loose(r.output().strip()), where);
                } else {
                    assertEquals(expected, r.output().strip(), where);
                }
            }
            for (String line : body.split("\n")) {
                if (line.matches("[A-Z][A-Z0-9_]*=\\S*")) {
                    variables.append(line).append('\n');
                }
            }
            ran.add(b.section());
        }
        return ran;
    }

    /** The last lines of the servers' logs ({@code *.log}) in the test's directories: why a block failed. */
    static String serverLogs(java.util.Collection<Path> dirs) throws IOException {
        StringBuilder out = new StringBuilder();
        for (Path d : dirs) {
            if (!Files.isDirectory(d)) {
                continue;
            }
            try (var files = Files.walk(d, 3)) {
                for (Path log : files.filter(f -> f.toString().endsWith(".log") && Files.isRegularFile(f)).toList()) {
                    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                    out.append("\n--- last lines of ").append(log).append(":\n")
                            .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
                }
            }
        }
        return out.toString();
    }

    /** {@code text} with the document's directories and ports replaced by the test's. */
    static String map(String text, Map<String, Path> dirs, Map<Integer, Integer> ports) {
        String t = text;
        for (Map.Entry<String, Path> d : dirs.entrySet()) {
            t = t.replace(d.getKey(), d.getValue().toString());
        }
        if (ports.isEmpty()) {
            return t;
        }
        Pattern port = Pattern.compile("(?<=:|--metrics |port=)(" + String.join("|",
                ports.keySet().stream().map(String::valueOf).toList()) + ")\\b");
        return port.matcher(t).replaceAll(m -> String.valueOf(ports.get(Integer.parseInt(m.group(1)))));
    }

    /**
     * An output without what differs between runs: runs of blanks (columns padded to a port's
     * length), figures and peer numbers, which peer leads; an {@code exit N} line stays whole.
     */
    static String loose(String output) {
        StringBuilder b = new StringBuilder();
        for (String line : output.split("\n")) {
            String l = line.strip().replaceAll("\\s+", " ");
            if (!l.matches("exit \\d+")) {
                l = l.replaceAll("\\d+", "N").replaceAll("\\b(leader|follower)\\b", "ROLE");
            }
            b.append(l).append('\n');
        }
        return b.toString();
    }

    /** A server that a failed block left running (its pid file is still there): SIGKILL, so the test ends. */
    static void stopLeftover(Path pidFile) throws IOException {
        if (Files.exists(pidFile)) {
            ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
