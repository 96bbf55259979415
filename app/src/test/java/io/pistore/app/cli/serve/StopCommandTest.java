package io.pistore.app.cli.serve;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code pistore stop} counts a server that has exited as stopped while it waits to be reaped: a
 * daemon's parent is init, which may reap it only seconds later (or, in a container whose first
 * process does not reap, never).
 */
class StopCommandTest {
    @Test
    void aRunningProcessHasNotExitedAZombieAndAGoneOneHave() throws Exception {
        assertFalse(StopCommand.exited(ProcessHandle.current().pid()), "this JVM runs");
        // A child of a shell that then becomes `sleep` and never waits: a zombie while the sleep runs.
        // The child outlives the exec (one that ended before it could be reaped by the shell, and never
        // be a zombie at all).
        Process parent = new ProcessBuilder("sh", "-c", "sleep 1 & echo $!; exec sleep 30").start();
        try {
            long zombie;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(parent.getInputStream(),
                    StandardCharsets.US_ASCII))) {
                zombie = Long.parseLong(r.readLine().strip());
            }
            Path stat = Path.of("/proc", Long.toString(zombie), "stat");
            Eventually.await("the child to be a zombie", Duration.ofSeconds(30),
                    () -> Files.exists(stat) && stateOf(stat) == 'Z');
            assertTrue(StopCommand.exited(zombie), "exited, not reaped: stopped");
            assertFalse(StopCommand.exited(parent.pid()), "its parent still runs");
        } finally {
            parent.destroyForcibly().waitFor();
        }
        assertTrue(StopCommand.exited(parent.pid()), "reaped: gone");
    }

    private static char stateOf(Path stat) {
        try {
            String s = Files.readString(stat);
            return s.charAt(s.lastIndexOf(')') + 2);
        } catch (java.io.IOException e) {
            return '?'; // gone meanwhile
        }
    }
}
