package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.EngineCommandsTest.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One exit-code table for every command (0 ok, 1 bad blocks, 2 usage or unusable files, 3 I/O or
 * peer unreachable), each failure one line on stderr; the failure modes that once exited with
 * another code, and parser errors that name the unknown word and list the valid ones.
 */
class ExitCodeTableTest {
    @TempDir
    Path dir;

    private static Result run(String... args) {
        return EngineCommandsTest.run(args);
    }

    private static void assertFails(int code, Result r, String expected) {
        assertEquals(code, r.code(), r.out() + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains(expected), r.err());
    }

    @Test
    void anUnknownCommandOrOptionIsNamedWithTheValidOnes() {
        Result c = run("frobnicate");
        assertFails(ExitCodes.USAGE, c, "pistore: unknown command 'frobnicate' (commands: serve, stats, bench, volume");
        assertTrue(c.err().contains("stop"), c.err());
        Result sub = run("volume", "lst");
        assertFails(ExitCodes.USAGE, sub, "unknown command 'lst' (commands: create, list, resize, delete)");
        Result o = run("bench", "--frob");
        assertFails(ExitCodes.USAGE, o, "pistore bench: unknown option '--frob' (options: ");
        assertTrue(o.err().contains("--connect-timeout"), o.err());
    }

    @Test
    void theTableIsInTheCommandsHelpNotInHelpsOwn() {
        String top = run("--help").out().replaceAll("\\s+", " ");
        assertTrue(top.contains("Exit codes:") && top.contains("a server stopped by SIGTERM or SIGINT")
                && top.contains("a target or peer unreachable"), top);
        assertTrue(run("bench", "--help").out().contains("Exit codes:"));
        Result help = run("help", "--help");
        assertEquals(0, help.code(), help.err());
        assertFalse(help.out().contains("Exit codes:"), help.out());
        String create = run("volume", "create", "--help").out().replaceAll("\\s+", " ");
        assertTrue(create.contains("every command but 'volume create', which makes it, needs it to exist"), create);
    }

    @Test
    void benchArgumentMistakesAreUsageErrorsBeforeAnyConnectOrPrefill() {
        assertFails(ExitCodes.USAGE, run("bench", "--transport", "tcp", "--target", "127.0.0.1", "--rw", "randread"),
                "--target 127.0.0.1: expected HOST:PORT");
        assertFails(ExitCodes.USAGE, run("bench", "--transport", "all", "--target", "127.0.0.1:4430", "--rw",
                "randread"), "--transport all runs every transport on its embedded target");
        Result size = run("bench", "--size", "5000", "--seconds", "1");
        assertFails(ExitCodes.USAGE, size, "--size must be a whole number of 4096-byte blocks");
        assertFalse(size.out().contains("prefill"), size.out());
        assertFails(ExitCodes.USAGE, run("bench", "--connect-timeout", "soon"),
                "--connect-timeout must be a duration");
    }

    @Test
    void aRegularFileAsDataDirectoryIsUnusableForEveryCommand() throws Exception {
        Path file = Files.writeString(dir.resolve("afile"), "x");
        assertFails(ExitCodes.USAGE, run("volume", "create", "--data", file.toString(), "v1", "--size", "1MiB"),
                "--data " + file + " is not a directory");
        assertFails(ExitCodes.USAGE, run("volume", "list", "--data", file.toString()), "is not a directory");
        assertFails(ExitCodes.USAGE, run("scrub", "--data", file.toString(), "v1"), "is not a directory");
    }

    @Test
    void stopWithoutAServer() throws Exception {
        assertFails(ExitCodes.USAGE, run("stop", "--pid-file", dir.resolve("none.pid").toString()), "no such file");
        Path garbage = Files.writeString(dir.resolve("bad.pid"), "abc\n");
        assertFails(ExitCodes.USAGE, run("stop", "--pid-file", garbage.toString()), "holds no pid");
        // a process that has exited: its pid is free (the kernel does not reuse it at once)
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        Path stale = Files.writeString(dir.resolve("stale.pid"), p.pid() + "\n");
        Result r = run("stop", "--pid-file", stale.toString());
        assertEquals(ExitCodes.OK, r.code(), r.err());
        assertEquals("pistore stop: no process " + p.pid() + " runs: already stopped", r.out().strip());
        // a live process that is no serve is not signalled
        Path mine = Files.writeString(dir.resolve("mine.pid"), ProcessHandle.current().pid() + "\n");
        assertFails(ExitCodes.USAGE, run("stop", "--pid-file", mine.toString()), "is no pistore serve: not stopped");
    }

    @Test
    void replicatedVolumesAreListedOfflineAndScrubNamesReplicas() {
        Path data = dir.resolve("d1");
        String peers = "n1=127.0.0.1:19871,n2=127.0.0.1:19872,n3=127.0.0.1:19873";
        Result c = run("volume", "create", "rv", "--size", "1MiB", "--data", data.toString(), "--replica-id", "n1",
                "--replicas", peers);
        assertEquals(0, c.code(), c.err());
        assertEquals(0, run("volume", "create", "plain", "--size", "1MiB", "--data", data.toString()).code());
        Result list = run("volume", "list", "--data", data.toString());
        assertEquals(0, list.code(), list.err());
        assertTrue(list.out().lines().anyMatch(l -> l.startsWith("plain ") && !l.contains("replicated")), list.out());
        assertTrue(list.out().lines().anyMatch(l -> l.startsWith("rv ") && l.contains(" 256 ")
                && l.endsWith("replicated on " + peers)), list.out());
        assertFails(ExitCodes.USAGE, run("scrub", "rv", "--data", data.toString()),
                "volume rv is replicated (peers " + peers + "): scrub it through its running peers with --replicas "
                        + peers);
        assertFails(ExitCodes.USAGE, run("scrub", "nope", "--data", data.toString()), "no volume named 'nope'");
    }
}
