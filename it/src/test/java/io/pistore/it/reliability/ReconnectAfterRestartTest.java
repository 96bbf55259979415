package io.pistore.it.reliability;

import io.pistore.it.CtrlC;
import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.app.cli.Main;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host keeps its connection object across a target crash: {@code pistore serve} (tcp, a file
 * volume) in its own process is killed with SIGKILL and started again on the same address and
 * directory; the host's queues reconnect by themselves, requests during the outage fail with a
 * transport error (never hang, never succeed with wrong data), and flushed data reads back intact.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ReconnectAfterRestartTest {
    static final int BS = 4096;

    @TempDir
    Path dir;


    /** One request, waited for (no retries: the queues are never full here), its completion whatever it is. */
    static Completion call(Supplier<CompletableFuture<Completion>> submit) throws Exception {
        return submit.get().get(60, TimeUnit.SECONDS);
    }

    /** Volume {@code v}, 4 MiB of 4096+8 blocks, in the test's data directory. */
    private void createVolume() {
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", dir.toString(),
                "v", "--size", "4MiB", "--format", "4096+8"), o.toString());
    }

    @Test
    void queuesComeBackAfterTheTargetIsKilledAndRestarted() throws Exception {
        createVolume();
        String address = "127.0.0.1:" + FreePorts.next();
        byte[][] data = new byte[16][BS];
        Random rnd = new Random(0x5EC0);
        PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp",
                "--listen", address);
        try (BlockTransport t = Transports.find("tcp").create();
             HostConnection c = t.connect(server.awaitListening(), new ConnectOptions(2, 8))) {
            BlockDevice dev = BlockDevice.open(c, "v");
            for (int lba = 0; lba < data.length; lba++) {
                rnd.nextBytes(data[lba]);
                long at = lba;
                byte[] d = data[lba];
                Completion w = call(() -> dev.write(at, ScatterList.wrap(d)));
                assertEquals(Status.SUCCESS, w.status(), w.toString());
            }
            assertEquals(Status.SUCCESS, call(dev::flush).status());

            server.kill();
            Completion during = call(() -> dev.read(0, ScatterList.of(ByteBuffer.allocate(BS))));
            assertEquals(Status.TRANSPORT_ERROR, during.status(), during.toString());

            server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp", "--listen", address);
            assertEquals(address, server.awaitListening());
            AtomicInteger failedMeanwhile = new AtomicInteger();
            for (int q = 0; q < c.queueCount(); q++) {
                int queue = q; // each queue reconnects on its own: try each one explicitly
                Eventually.until("queue " + q + " to reconnect", Duration.ofSeconds(60), () -> call(() -> dev.submit(queue,
                        BlockRequest.read("v", 0, 1, ScatterList.of(ByteBuffer.allocate(BS)), null, dev.insertStrip(0)))),
                        r -> {
                            if (r.isSuccess()) {
                                return true;
                            }
                            assertEquals(Status.TRANSPORT_ERROR, r.status(), r.toString());
                            failedMeanwhile.incrementAndGet();
                            return false;
                        });
            }
            for (int lba = 0; lba < data.length; lba++) {
                ByteBuffer b = ByteBuffer.allocate(BS);
                long at = lba;
                Completion r = call(() -> dev.read(at, ScatterList.of(b)));
                assertEquals(Status.SUCCESS, r.status(), "lba " + lba + ": " + r);
                assertArrayEquals(data[lba], b.array(), "lba " + lba);
            }
            System.out.println("[reliability] reconnect: target killed and restarted on " + address
                    + "; requests failed with a transport error while down: " + failedMeanwhile
                    + "; 16 flushed blocks read back intact over the same host connection");
        } finally {
            server.close();
        }
    }

    /**
     * A running {@code pistore bench --rw verify} (a process of its own) across a kill -9 and restart
     * of its target: requests fail while the target is down, then the bench resumes on its own (the
     * progress shows requests again); Ctrl-C then ends it, and its summary finds no wrong data and it
     * exits 3 (requests failed), not 1.
     */
    @Test
    void aRunningBenchResumesAfterTheTargetRestarts() throws Exception {
        createVolume();
        String address = "127.0.0.1:" + FreePorts.next();
        PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp",
                "--listen", address);
        PistoreProcess bench = null;
        try {
            server.awaitListening();
            bench = PistoreProcess.start(List.of(), "bench", "--transport", "tcp", "--target", address, "--volume", "v",
                    "--rw", "verify", "--qd", "4", "--seconds", "300", "--ramp", "0"); // ended below by SIGINT
            awaitLine(bench, l -> l.matches("\\[tcp +[1-9]\\d*s\\] iops=[1-9].*"), 60);
            server.kill();
            awaitLine(bench, l -> l.matches("\\[tcp +\\d+s\\] iops=0 .*"), 30);
            server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp", "--listen",
                    address);
            assertEquals(address, server.awaitListening());
            int seen = bench.lines.size();
            PistoreProcess b = bench;
            awaitLine(b, l -> b.lines.indexOf(l) >= seen && l.matches("\\[tcp +\\d+s\\] iops=[1-9].*"), 120);
            // the bench resumed after the restart: Ctrl-C ends it with its summary and its own exit code
            CtrlC.send(bench.pid());
            int code = bench.await(120);
            assertTrue(bench.output().contains("data_mismatches=0"), bench.output());
            assertTrue(bench.output().matches("(?s).*io_errors=[1-9].*"), bench.output());
            assertEquals(3, code, "requests failed while the target was down: exit 3, " + bench.output());
        } finally {
            if (bench != null) {
                bench.close();
            }
            server.close();
        }
    }

    /** Waits until the process printed a line that {@code want} accepts. */
    private static void awaitLine(PistoreProcess p, java.util.function.Predicate<String> want, int seconds) {
        p.awaitLine("such a line", want, seconds);
    }
}
