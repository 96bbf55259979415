package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class ServerLogTest {
    private static final String ISO = "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}(Z|[+-]\\d{2}:\\d{2})";

    @Test
    void linesCarryIsoDateTimeAndLevelAndStopBelowTheChosenLevel() {
        StringWriter sw = new StringWriter();
        Clock clock = Clock.fixed(Instant.parse("2026-03-01T14:05:09Z"), ZoneId.of("UTC"));
        ServerLog log = new ServerLog(new PrintWriter(sw), LogLevel.INFO, clock);
        log.log(LogLevel.INFO, "connection from 127.0.0.1:50312");
        log.log(LogLevel.DEBUG, "nbd: polls 5");
        log.at(LogLevel.WARN).accept("careful");
        log.at(LogLevel.DEBUG).accept("hidden");
        String[] lines = sw.toString().split("\\R");
        assertEquals(2, lines.length, sw.toString());
        assertTrue(lines[0].matches(ISO + " INFO connection from 127\\.0\\.0\\.1:50312"), lines[0]);
        assertTrue(lines[1].matches(ISO + " WARN careful"), lines[1]);

        StringWriter dw = new StringWriter();
        new ServerLog(new PrintWriter(dw), LogLevel.DEBUG, clock).log(LogLevel.DEBUG, "nbd: polls 5");
        assertTrue(dw.toString().strip().matches(ISO + " DEBUG nbd: polls 5"), dw.toString());
    }

    @Test
    void theTransportsRecordsGetTheSameShape() {
        LogRecord r = new LogRecord(Level.WARNING, "pistore tcp: cannot reconnect");
        r.setLoggerName("io.pistore.transport.tcp");
        String line = new LogLine().format(r).strip();
        assertTrue(line.matches(ISO + " WARN io\\.pistore\\.transport\\.tcp: pistore tcp: cannot reconnect"), line);
        assertEquals(LogLevel.ERROR, LogLevel.of(Level.SEVERE));
        assertEquals(LogLevel.DEBUG, LogLevel.of(Level.FINE));
    }

    @Test
    void serveWritesItsConnectionLinesInThatShapeAndRefusesAnUnknownLevel() throws Exception {
        String listen = "log-test-" + System.nanoTime();
        try (ServeThread serve = new ServeThread("serve", "--memory-volume", "m1:1MiB", "--transport", "local",
                "--listen", listen, "--log-level", "debug")) {
            serve.awaitOutput(o -> o.contains("on local "));
            assertTrue(serve.out().contains("pistore serve: 1 volume(s) in memory on local " + listen), serve.out());
        }
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), "serve", "--memory-volume", "m1:1MiB",
                "--log-level", "chatty");
        assertEquals(ExitCodes.USAGE, code);
        assertEquals("pistore serve: --log-level must be error, warn, info or debug, not 'chatty'", err.toString().strip());
    }
}
