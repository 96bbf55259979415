package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void showsRateAndTimeLeftOnOneRewrittenLineThenErasesIt() {
        StringWriter sw = new StringWriter();
        AtomicLong now = new AtomicLong();
        try (Progress p = new Progress(new PrintWriter(sw), "scrub v1", 100L << 20, true, now::get)) {
            now.set(2 * SECOND);
            p.advance(25L << 20); // 25 MiB in 2 s: 12.5 MiB/s, 75 MiB left: 6 s
            assertEquals("\rscrub v1:  25% 25.0 MiB of 100.0 MiB, 12.5 MiB/s, 6 s left", sw.toString());
            now.set(4 * SECOND);
            p.advance(25L << 20);
        }
        String out = sw.toString();
        assertTrue(out.contains("\rscrub v1:  50% 50.0 MiB of 100.0 MiB, 12.5 MiB/s, 4 s left"), out);
        int width = "scrub v1:  25% 25.0 MiB of 100.0 MiB, 12.5 MiB/s, 6 s left".length();
        assertTrue(out.endsWith("\r" + " ".repeat(width) + "\r"), "erased at the end: " + out.replace("\r", "\\r"));
        assertTrue(!out.contains("\n"), "one line, rewritten");
    }

    @Test
    void quietOrNotATerminalPrintsNothing() {
        StringWriter sw = new StringWriter();
        AtomicLong now = new AtomicLong();
        try (Progress p = new Progress(new PrintWriter(sw), "pi verify", 100, false, now::get)) {
            now.set(5 * SECOND);
            p.advance(50);
        }
        assertEquals("", sw.toString());
        QuietOption q = new QuietOption();
        q.quiet = true;
        try (Progress p = q.progress(new PrintWriter(sw), "pi verify", 100)) {
            p.advance(50);
        }
        assertEquals("", sw.toString());
    }

    @Test
    void durationsReadAsSecondsMinutesOrHours() {
        assertEquals("0 s", Progress.duration(0.2));
        assertEquals("59 s", Progress.duration(59));
        assertEquals("3m05s", Progress.duration(185));
        assertEquals("2h07m", Progress.duration(2 * 3600 + 7 * 60 + 30));
        assertEquals("?", Progress.duration(-1));
    }
}
