package io.pistore.app.cli.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve's background scrub options: the durations --scrub-every takes and the ones it refuses in
 * one line, a bad --scrub-rate, and a serve that exports another target's volumes, which has none
 * of its own to scrub (the scrub itself: PeriodicScrubTest in the server module).
 */
class ServeScrubOptionsTest {
    @TempDir
    Path dir;

    @Test
    void durationsWithAndWithoutAUnit() {
        assertEquals(30, ServeScrubOptions.duration("30s").toSeconds());
        assertEquals(45, ServeScrubOptions.duration("45").toSeconds());
        assertEquals(15 * 60, ServeScrubOptions.duration("15m").toSeconds());
        assertEquals(12 * 3600, ServeScrubOptions.duration("12H").toSeconds());
        assertEquals(7 * 86400, ServeScrubOptions.duration("7d").toSeconds());
        for (String bad : new String[] {"0", "-1s", "5w", "", "m", "1.5h", "99999999999999999d"}) {
            CliException e = assertThrows(CliException.class, () -> ServeScrubOptions.duration(bad), bad);
            assertTrue(e.getMessage().startsWith("--scrub-every takes a positive duration"), e.getMessage());
        }
    }

    String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new String[] {Integer.toString(code), err.toString().strip()};
    }

    @Test
    void badValuesStopServeWithOneLine() {
        String data = dir.resolve("d").toString();
        assertEquals("0", run("volume", "create", "--data", data, "v", "--size", "1MiB")[0]);
        String[] every = run("serve", "--data", data, "--transport", "local", "--listen", "scrub-opt", "--scrub-every", "5w");
        assertEquals("2", every[0], every[1]);
        assertEquals("pistore serve: --scrub-every takes a positive duration such as 30s, 15m, 12h or 7d, not '5w'",
                every[1]);
        String[] rate = run("serve", "--data", data, "--transport", "local", "--listen", "scrub-opt", "--scrub-every", "1h",
                "--scrub-rate", "0");
        assertEquals("2", rate[0], rate[1]);
        assertTrue(rate[1].contains("--scrub-rate must be positive"), rate[1]);
        String[] remote = run("serve", "--nbd", "127.0.0.1:0", "--transport", "tcp", "--target", "127.0.0.1:1",
                "--scrub-every", "1h");
        assertEquals("2", remote[0], remote[1]);
        assertTrue(remote[1].contains("--scrub-every scrubs this serve's volumes"), remote[1]);
    }
}
