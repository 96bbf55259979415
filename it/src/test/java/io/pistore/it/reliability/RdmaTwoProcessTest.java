package io.pistore.it.reliability;

import io.pistore.it.CtrlC;
import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rdma transport (soft NIC) in the two-process shape of the README: {@code pistore serve
 * --transport rdma --listen H:P} in one process, {@code pistore bench --transport rdma --target H:P}
 * in another; and the same with a {@link PacketFlipProxy} flipping bits in the packets between them,
 * which the packet CRC must catch (dropped, sent again) so that nothing wrong is ever stored or read;
 * and a kill -9 of the target under load, which the host's bench must survive without hanging.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RdmaTwoProcessTest {
    @TempDir
    Path dir;

    private void createVolume(String name) {
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", dir.toString(),
                name, "--size", "16MiB", "--format", "4096+8"), o.toString());
    }

    private static PistoreProcess bench(String target, String volume, String rw, int seconds, String... more)
            throws Exception {
        List<String> a = new ArrayList<>(List.of("bench", "--transport", "rdma", "--target", target, "--volume", volume,
                "--rw", rw, "--seconds", String.valueOf(seconds)));
        a.addAll(List.of(more));
        return PistoreProcess.start(List.of(), a.toArray(new String[0]));
    }

    /** Waits until the process printed a line matching {@code regex} (a hang guard). */
    private static void awaitLine(PistoreProcess p, String regex, int seconds) {
        p.awaitLine("a line matching " + regex, l -> l.matches(regex), seconds);
    }

    @Test
    void serveAndBenchMeetInTwoProcessesAsTheReadmeSays() throws Exception {
        createVolume("v1");
        try (PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "rdma",
                "--listen", "127.0.0.1:0")) {
            String address = server.awaitListening();
            PistoreProcess read = bench(address, "v1", "randread", 1);
            assertEquals(0, read.await(120), read.output());
            assertTrue(read.output().contains("transport=rdma rw=randread"), read.output());
            assertTrue(read.output().contains("io_errors=0 data_mismatches=0"), read.output());
            assertTrue(read.output().contains("PI checked by the NIC's signature engine"), read.output());
            PistoreProcess verify = bench(address, "v1", "verify", 1);
            assertEquals(0, verify.await(120), verify.output());
            assertTrue(verify.output().contains("pi_errors=0 (guard=0 app=0 ref=0) io_errors=0 data_mismatches=0"),
                    verify.output());
        }
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "scrub", "--data", dir.toString(), "v1"),
                o.toString());
    }

    @Test
    void bitsFlippedInThePacketsAreCaughtByTheCrcNeverStored() throws Exception {
        int seconds = Figures.intFlag("pistore.proxy.seconds", 3);
        createVolume("flip");
        try (PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "rdma",
                "--listen", "127.0.0.1:0")) {
            String address = server.awaitListening();
            try (PacketFlipProxy p = new PacketFlipProxy(address, 0.02, 17)) {
                PistoreProcess b = bench(p.address(), "flip", "verify", seconds, "--qd", "16", "--ramp", "0", "--json");
                int code = b.await(seconds + 120L);
                String json = b.output();
                Figures.record("proxy", "rdma packets, any bit after the length field of data frames: frames="
                        + p.frames.sum() + " injected=" + p.injected.sum() + " request frames sent again="
                        + p.resentRequests.sum() + " " + json.replaceAll("(?s).*(\"pi_errors\":\\d+).*(\"io_errors\":\\d+)"
                        + ".*(\"data_mismatches\":\\d+).*", "$1 $2 $3"));
                assertTrue(p.injected.sum() > 10, "flipped " + p.injected.sum() + ": " + json);
                assertTrue(p.resentRequests.sum() > 0, "dropped frames are sent again: " + json);
                assertTrue(json.contains("\"data_mismatches\":0"), json);
                assertTrue(json.contains("\"io_errors\":0"), json);
                assertTrue(json.contains("\"pi_errors\":0"), json);
                assertEquals(0, code, json);
            }
        }
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "scrub", "--data", dir.toString(), "flip"),
                o.toString());
    }

    /**
     * kill -9 of {@code serve --transport rdma} under a running {@code bench --rw verify}: the host's
     * soft NIC sees the socket end without a disconnect, fails what was in flight (RETRY_EXC_ERR, then
     * flushes), the rdma host queues fail their requests with a transport error and reconnect in the
     * background, as tcp's do. The bench sends each failed request again every 100 ms, so once a target
     * is restarted on the same address it resumes by itself: no wrong data, exit code 3 (requests
     * failed), no hang, and the volume scrubs clean. The bench is interrupted (SIGINT) once it has
     * resumed: it prints its summary and exits with its code, as at the end of its seconds.
     */
    @Test
    void aKilledTargetEndsTheHostsRequestsCleanlyAndTheBenchResumesOnARestartedOne() throws Exception {
        createVolume("k");
        String address = "127.0.0.1:" + FreePorts.next();
        PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "rdma",
                "--listen", address);
        PistoreProcess b = null;
        try {
            assertEquals(address, server.awaitListening());
            // reconnect attempts at most 1 s apart, so the bench resumes soon after the restart
            b = bench(address, "k", "verify", 300, "--qd", "32", "--ramp", "0", "--transport-option",
                    "rdma.reconnectMaxDelayMs=1000");
            awaitLine(b, "\\[rdma +[1-9]\\d*s\\] iops=[1-9].*", 60);
            server.kill();
            awaitLine(b, "\\[rdma +\\d+s\\] iops=0 .*", 30);
            server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "rdma", "--listen", address);
            assertEquals(address, server.awaitListening(), "the address is free again after the kill");
            int seen = b.lines.size();
            PistoreProcess running = b;
            try {
                Eventually.await("the bench to resume after the restart", Duration.ofSeconds(120), () -> {
                    synchronized (running.lines) {
                        return running.lines.subList(seen, running.lines.size()).stream()
                                .anyMatch(l -> l.matches("\\[rdma +\\d+s\\] iops=[1-9].*"));
                    }
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + b.output(), e);
            }
            CtrlC.send(b.pid());
            int code = b.await(120); // a hang guard: interrupted, the bench prints its summary and exits
            assertTrue(b.output().contains("pistore bench: interrupted"), b.output());
            assertEquals(3, code, "requests failed while the target was down: exit 3, " + b.output());
            assertTrue(b.output().contains("data_mismatches=0"), b.output());
            assertTrue(b.output().matches("(?s).*io_errors=[1-9].*"), b.output());
            assertTrue(b.output().contains("TRANSPORT_ERROR"), b.output());
        } finally {
            if (b != null) {
                b.close();
            }
            server.close();
        }
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "scrub", "--data", dir.toString(), "k"),
                o.toString());
    }
}
