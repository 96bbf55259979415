package io.pistore.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Tests wait on conditions ({@link Eventually}, a latch, a future, a process), not for a fixed time:
 * every pause in a module's test sources (a thread's sleep, a TimeUnit's sleep, LockSupport's park)
 * carries, on its line or on the line before, a comment with {@value #MARKER} and why (the length of a
 * fault, the pacing of a load, the time in which something must not happen). The modules are those
 * the root pom lists; the root is found by walking up from the working directory.
 */
class SleepMarkerTest {
    static final String MARKER = "not a synchronisation";
    static final Pattern PAUSE = Pattern.compile(
            "\\b(?:Thread\\s*\\.\\s*sleep|[A-Z]+\\s*\\.\\s*sleep|parkNanos|parkUntil)\\s*\\(");
    private static final Pattern MODULE = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>");

    /** The 1-based numbers of the lines that pause without the marker on them or on the line before. */
    static List<Integer> unmarked(List<String> lines) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (PAUSE.matcher(lines.get(i)).find() && !lines.get(i).contains(MARKER)
                    && (i == 0 || !lines.get(i - 1).contains(MARKER))) {
                out.add(i + 1);
            }
        }
        return out;
    }

    /** The directory of the pom that lists the modules, walking up from the working directory. */
    static Path root() throws IOException {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path pom = d.resolve("pom.xml");
            if (Files.isRegularFile(pom) && Files.readString(pom).contains("<modules>")) {
                return d;
            }
        }
        throw new AssertionError("no pom.xml with <modules> above " + Path.of("").toAbsolutePath());
    }

    @Test
    void everyPauseInATestSaysWhyItIsNotASynchronisation() throws IOException {
        Path root = root();
        Matcher m = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
        List<Path> trees = new ArrayList<>();
        while (m.find()) {
            Path t = root.resolve(m.group(1)).resolve("src").resolve("test");
            if (Files.isDirectory(t)) {
                trees.add(t);
            }
        }
        assertTrue(trees.contains(root.resolve("testkit/src/test")), "the modules' test trees: " + trees);
        List<String> found = new ArrayList<>();
        int files = 0;
        for (Path t : trees) {
            List<Path> sources;
            try (Stream<Path> s = Files.walk(t)) {
                sources = s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
            }
            for (Path p : sources) {
                files++;
                List<String> lines = Files.readAllLines(p, StandardCharsets.UTF_8);
                for (int n : unmarked(lines)) {
                    found.add(root.relativize(p) + ":" + n + ": " + lines.get(n - 1).strip());
                }
            }
        }
        assertTrue(files > trees.size(), "test sources read: " + files);
        assertEquals(List.of(), found, "pauses in tests without a '// " + MARKER + ": why' comment; "
                + "a wait for something to happen uses Eventually (testkit) or a latch, a future, a process wait");
    }

    // the samples are built from pieces so that this file holds no pause itself
    private static final String SLEEP = "Thread.sl" + "eep(20);";

    @Test
    void aBarePauseIsFoundInEachOfItsForms() {
        assertEquals(List.of(1, 2, 3, 4), unmarked(List.of("        " + SLEEP,
                "TimeUnit.MILLISECONDS.sl" + "eep(5);", "LockSupport.park" + "Nanos(1000);",
                "java.util.concurrent.locks.LockSupport.park" + "Until(t);")));
    }

    @Test
    void theMarkerOnTheLineOrTheLineBeforeAcceptsAPause() {
        assertEquals(List.of(), unmarked(List.of(SLEEP + " // the fault's length, " + MARKER)));
        assertEquals(List.of(), unmarked(List.of("// " + MARKER + ": the pacing of a load", SLEEP)));
        assertEquals(List.of(3), unmarked(List.of("// " + MARKER + ": too far above", "int x = 1;", SLEEP)));
    }

    @Test
    void whatOnlyLooksLikeAPauseIsNotOne() {
        assertEquals(List.of(), unmarked(List.of("Eventually.await(\"x\", () -> true);", "sleepy(1);",
                "p.sleeping();", "cq.await(TimeUnit.SECONDS.toNanos(1));")));
    }
}
