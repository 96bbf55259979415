package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.BlockFormat;
import io.pistore.server.PistoreServer;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TransportOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@code pistore stats} against a running server (built in the test) while a host reads and writes. */
class StatsCommandTest {
    @Test
    void printsOneTablePerIntervalWithTheVolumesFigures() throws Exception {
        String listen = "stats-test-" + System.nanoTime();
        try (PistoreServer server = PistoreServer.builder().memoryVolume("m1", BlockFormat.of(4096, 8), 4096)
                .listen("local", listen).metrics("0").build().start()) {
            String port = Integer.toString(server.metrics().port());
            AtomicBoolean stop = new AtomicBoolean();
            try (BlockTransport t = Transports.find("local", TransportOptions.NONE).create(TransportOptions.NONE);
                 HostConnection c = t.connect(listen, new ConnectOptions(1, 8))) {
                BlockDevice d = BlockDevice.open(c, "m1");
                Thread io = new Thread(() -> {
                    ByteBuffer b = ByteBuffer.allocate(4096);
                    try {
                        while (!stop.get()) {
                            d.writeSync(0, b.clear());
                            d.readSync(8, b.clear());
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, "io");
                d.writeSync(0, ByteBuffer.allocate(4096)); // the volume has figures before the first scrape
                io.start();
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                int code;
                try {
                    code = Main.run(new PrintWriter(out), new PrintWriter(err), "stats", "--target", port, "--count", "2");
                } finally {
                    stop.set(true);
                    io.join();
                }
                assertEquals(0, code, err.toString());
                String[] lines = out.toString().split("\\R");
                assertEquals(4, lines.length, "two tables of a heading and one volume: " + out);
                assertTrue(lines[0].contains("volume") && lines[0].contains("r/s") && lines[0].contains("p99_us"), lines[0]);
                String[] row = lines[1].trim().split("\\s+");
                assertEquals("m1", row[0], lines[1]);
                assertTrue(Double.parseDouble(row[1]) > 0 && Double.parseDouble(row[2]) > 0,
                        "reads and writes ran through the interval: " + lines[1]);
                assertTrue(Double.parseDouble(row[5]) > 0, "a p50 latency: " + lines[1]);
                assertEquals("0", row[8], "no PI errors: " + lines[1]);
            }
        }
    }

    @Test
    void noServerIsOneLineAndAUsageExit() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), "stats", "--target", "127.0.0.1:1", "--count", "1");
        assertEquals(ExitCodes.USAGE, code);
        assertTrue(err.toString().startsWith("pistore stats: cannot read metrics at http://127.0.0.1:1/metrics"), err.toString());
        assertEquals(1, err.toString().strip().lines().count(), err.toString());
    }
}
