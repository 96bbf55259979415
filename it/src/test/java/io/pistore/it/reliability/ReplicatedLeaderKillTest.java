package io.pistore.it.reliability;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated volume on three {@code pistore serve} processes (tcp for the host, Ratis for the
 * replicas): the leader is killed with SIGKILL under a flushing write load through another peer;
 * a new leader takes over, every acknowledged write reads back, the killed peer restarts and
 * catches up, a scrub of every replica is clean, and once all three stop their data files are equal.
 * {@code -Dpistore.replicated.writes=N} writes longer (default 120 before and 120 after the kill).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ReplicatedLeaderKillTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    private String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    private static int run(String... args) {
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), args);
        if (code != 0) {
            throw new AssertionError(String.join(" ", args) + " -> " + code + ": " + o);
        }
        return code;
    }

    private PistoreProcess serve(int i, int[] tcp, int[] repl) throws Exception {
        return PistoreProcess.serve(List.of(), "--data", data(i), "--transport", "tcp", "--listen",
                "127.0.0.1:" + tcp[i], "--replica-id", "n" + i, "--replica-listen", "127.0.0.1:" + repl[i]);
    }

    /** Writes {@code count} blocks from {@code first}, each flushed every 8th; the acknowledged ones go to {@code acked}. */
    private static int write(BlockDevice dev, Random rnd, long first, int count, Map<Long, byte[]> acked)
            throws Exception {
        int failed = 0;
        for (long lba = first; lba < first + count; lba++) {
            byte[] d = new byte[BS];
            rnd.nextBytes(d);
            Completion c = dev.write(lba, ScatterList.wrap(d)).get(60, TimeUnit.SECONDS);
            if (c.isSuccess()) {
                acked.put(lba, d);
            } else {
                // Only while the group elects: the write timed out or its connection's peer was busy.
                assertEquals(Status.MEDIA_ERROR, c.status(), c.toString());
                failed++;
            }
            if (lba % 8 == 7) {
                Completion f = dev.flush().get(60, TimeUnit.SECONDS);
                if (!f.isSuccess()) {
                    failed++;
                }
            }
        }
        return failed;
    }

    @Test
    void noAcknowledgedWriteIsLostWhenTheLeaderIsKilled() throws Exception {
        int perPhase = Integer.getInteger("pistore.replicated.writes", 120);
        int[] tcp = new int[4];
        int[] repl = new int[4];
        StringBuilder peers = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            tcp[i] = FreePorts.next();
            repl[i] = FreePorts.next();
            peers.append(i == 1 ? "" : ",").append("n").append(i).append("=127.0.0.1:").append(repl[i]);
        }
        for (int i = 1; i <= 3; i++) {
            run("volume", "create", "--data", data(i), "rv", "--size", "4MiB", "--format", "4096+8", "--replica-id",
                    "n" + i, "--replicas", peers.toString());
        }
        PistoreProcess[] servers = new PistoreProcess[4];
        Map<Long, byte[]> acked = new HashMap<>();
        Random rnd = new Random(0x4E9);
        int failed;
        try {
            for (int i = 1; i <= 3; i++) {
                servers[i] = serve(i, tcp, repl);
            }
            for (int i = 1; i <= 3; i++) {
                servers[i].awaitListening();
            }
            // Make n1 the leader, so that the peer killed is the leader; the host uses n2.
            try (ReplicatedVolume v = ReplicatedVolume.connect("rv", peers.toString(), ReplicationSettings.defaults(),
                    line -> { })) {
                v.transferLeadership("n1");
            }
            try (BlockTransport t = Transports.find("tcp").create();
                 HostConnection c = t.connect("127.0.0.1:" + tcp[2], new ConnectOptions(1, 8))) {
                BlockDevice dev = BlockDevice.open(c, "rv");
                failed = write(dev, rnd, 0, perPhase, acked);
                servers[1].kill();
                failed += write(dev, rnd, perPhase, perPhase, acked);
                servers[1] = serve(1, tcp, repl);
                servers[1].awaitListening();
                failed += write(dev, rnd, 2L * perPhase, 16, acked);
                for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
                    ByteBuffer b = ByteBuffer.allocate(BS);
                    Completion r = dev.read(e.getKey(), ScatterList.of(b)).get(60, TimeUnit.SECONDS);
                    assertEquals(Status.SUCCESS, r.status(), "lba " + e.getKey() + ": " + r);
                    assertArrayEquals(e.getValue(), b.array(), "acknowledged write at lba " + e.getKey());
                }
            }
            StringWriter o = new StringWriter();
            int scrub = Main.run(new PrintWriter(o), new PrintWriter(new StringWriter()), "scrub", "rv", "--replicas",
                    peers.toString());
            assertEquals(0, scrub, o.toString());
            assertTrue(o.toString().contains("no bad copies"), o.toString());
            PistoreProcess.stopAll(servers);
        } finally {
            PistoreProcess.closeAll(servers);
        }
        List<byte[]> files = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            // A replica's newest blocks may still sit in its journal (a peer's stop records what it
            // applied and leaves the journal durable): opening and closing the store replays it and
            // checkpoints every block into the home files, which are then compared whole.
            Path replicas = dir.resolve("d" + i).resolve("replication/replicas");
            try (io.pistore.engine.volume.VolumeStore s = io.pistore.engine.volume.VolumeStore.open(replicas, 0,
                    "ReplicatedLeaderKillTest")) {
                assertNotNull(s.get("rv"), "n" + i + " holds a replica of rv");
            }
            files.add(Files.readAllBytes(replicas.resolve("rv.data")));
        }
        assertArrayEquals(files.get(0), files.get(1), "n1 (killed, restarted) and n2 hold the same data");
        assertArrayEquals(files.get(1), files.get(2), "n2 and n3 hold the same data");
        assertTrue(acked.size() >= perPhase, "the writes before the kill were all acknowledged: " + acked.size());
        Figures.record("replicated leader kill", "3 serve processes, leader n1 killed with SIGKILL under writes through n2; "
                + acked.size() + " acknowledged writes all read back, " + failed + " writes or flushes failed while the "
                + "group elected; n1 restarted and caught up; scrub clean; data files equal");
    }
}
