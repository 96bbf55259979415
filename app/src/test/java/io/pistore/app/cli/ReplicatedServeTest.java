package io.pistore.app.cli;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.Eventually;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replicated volume made and served with the CLI: three peers' volume create and serve, in this JVM. */
class ReplicatedServeTest {
    @TempDir
    Path dir;


    private String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    @Test
    void threePeersServeOneReplicatedVolumeThatEachOfThemReadsAndWrites() throws Exception {
        StringBuilder peers = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            peers.append(i == 1 ? "" : ",").append("n").append(i).append("=127.0.0.1:").append(FreePorts.next());
        }
        for (int i = 1; i <= 3; i++) {
            EngineCommandsTest.Result c = EngineCommandsTest.run("volume", "create", "--data", data(i), "rv", "--size",
                    "64KiB", "--format", "512+8", "--replica-id", "n" + i, "--replicas", peers.toString());
            assertEquals(0, c.code(), c.err());
            assertTrue(c.out().startsWith("created replica n" + i + " of rv: 128 blocks, 512+8"), c.out());
        }
        ServeThread[] serves = new ServeThread[3];
        try {
            for (int i = 1; i <= 3; i++) {
                String address = peers.toString().split(",")[i - 1].substring(3);
                serves[i - 1] = new ServeThread("serve", "--data", data(i), "--transport", "local", "--listen",
                        "replicated-serve-" + i, "--replica-id", "n" + i, "--replica-listen", address,
                        "--scrub-every", "1s");
            }
            for (ServeThread s : serves) {
                // the replica line comes before the transport listens; the listener's line after it
                s.awaitOutput(o -> o.contains("rv replicated on") && o.contains(" volume(s) from "));
                assertTrue(s.out().contains("rv replicated on " + peers), s.out() + " / " + s.err());
                assertTrue(!s.out().contains("warning"), s.out());
            }
            // The first write waits for no election: the group has a leader first.
            Eventually.await("a leader of rv", () -> EngineCommandsTest.run("replicas", "status", "rv", "--replicas",
                    peers.toString()).out().matches("(?s).*volume rv: leader n[123], .*"));
            byte[] written = new byte[8 * 512];
            new Random(20).nextBytes(written);
            try (BlockTransport t = new LocalTransportProvider().create()) {
                try (HostConnection c = t.connect("replicated-serve-2", new ConnectOptions(1, 8))) {
                    BlockDevice d = BlockDevice.open(c, "rv");
                    d.writeSync(16, ByteBuffer.wrap(written));
                    d.flushSync();
                }
                for (int i = 1; i <= 3; i++) {
                    try (HostConnection c = t.connect("replicated-serve-" + i, new ConnectOptions(1, 8))) {
                        ByteBuffer back = ByteBuffer.allocate(written.length);
                        BlockDevice.open(c, "rv").readSync(16, back);
                        assertArrayEquals(written, back.array(), "read through serve " + i);
                    }
                }
            }
            EngineCommandsTest.Result scrub = EngineCommandsTest.run("scrub", "rv", "--replicas", peers.toString());
            assertEquals(0, scrub.code(), scrub.out() + scrub.err());
            assertTrue(scrub.out().contains("checked 128 blocks (512+8 type=1 guard=crc16 pi=first) on 3 replicas (n1,n2,n3): "
                    + "no bad copies, 0 rewritten, 0 bad on every replica"), scrub.out());
            // the background scrub: the peer that leads checks every replica
            String pass = "scrub: rv: checked 128 blocks (512+8 type=1 guard=crc16 pi=first) on 3 replicas (n1,n2,n3): "
                    + "no bad copies, 0 rewritten, 0 bad on every replica";
            Eventually.await("a background pass over rv", () -> java.util.Arrays.stream(serves)
                    .anyMatch(s -> s.out().contains(pass) || s.err().contains(pass)));
            EngineCommandsTest.Result onePeer = EngineCommandsTest.run("scrub", "--data", data(1), "rv");
            assertEquals(2, onePeer.code(), onePeer.out() + onePeer.err());
            assertTrue(onePeer.err().contains("volume rv is replicated: scrub every replica through its peers with "
                    + "--replicas"), "a serving peer refuses to scrub its replica alone: " + onePeer.err());
            EngineCommandsTest.Result status = EngineCommandsTest.run("replicas", "status", "rv", "--replicas",
                    peers.toString());
            assertEquals(0, status.code(), status.out() + status.err());
            String[] lines = status.out().strip().split("\n");
            assertEquals(4, lines.length, status.out());
            for (int i = 0; i < 3; i++) {
                assertTrue(lines[i].startsWith("n" + (i + 1) + " "), lines[i]);
                assertTrue(lines[i].matches(".* (leader|follower) +last=\\d+ committed=\\d+ applied=\\d+ lag=\\d+ snapshot=(none|\\d+)"),
                        lines[i]);
            }
            assertTrue(lines[3].matches("volume rv: leader n[123], 3 of 3 peers answered"), lines[3]);
            // the leader moved to another member, and a transfer to no member refused
            String other = lines[3].startsWith("volume rv: leader n1") ? "n2" : "n1";
            EngineCommandsTest.Result moved = EngineCommandsTest.run("replicas", "transfer", "rv", "--to", other,
                    "--replicas", peers.toString());
            assertEquals(0, moved.code(), moved.out() + moved.err());
            assertEquals("volume rv: " + other + " leads", moved.out().strip());
            Eventually.await(other + " leads rv", () -> EngineCommandsTest.run("replicas", "status", "rv", "--replicas",
                    peers.toString()).out().contains("volume rv: leader " + other + ","));
            EngineCommandsTest.Result nobody = EngineCommandsTest.run("replicas", "transfer", "rv", "--to", "n9",
                    "--replicas", peers.toString());
            assertEquals(2, nobody.code(), nobody.out() + nobody.err());
            assertTrue(nobody.err().contains("volume rv: n9 is not a member of its group"), nobody.err());
        } finally {
            for (ServeThread s : serves) {
                if (s != null) {
                    assertEquals(0, s.stop(), s.out() + " / " + s.err());
                }
            }
        }
    }

    @Test
    void aReplicaNeedsAnIdAndAPeerListItCanRead() {
        EngineCommandsTest.Result noId = EngineCommandsTest.run("volume", "create", "--data", data(1), "rv",
                "--replicas", "n1=127.0.0.1:9000");
        assertEquals(2, noId.code());
        assertTrue(noId.err().contains("--replica-id is needed with --replicas"), noId.err());
        EngineCommandsTest.Result badPeer = EngineCommandsTest.run("volume", "create", "--data", data(1), "rv",
                "--replica-id", "n1", "--replicas", "n1=localhost");
        assertEquals(2, badPeer.code());
        assertTrue(badPeer.err().contains("--replicas: peer n1: address 'localhost' is not HOST:PORT"), badPeer.err());
        EngineCommandsTest.Result notMember = EngineCommandsTest.run("volume", "create", "--data", data(1), "rv",
                "--replica-id", "n9", "--replicas", "n1=127.0.0.1:9000");
        assertEquals(2, notMember.code());
        assertTrue(notMember.err().contains("peer n9 is not one of the peers of volume rv"), notMember.err());
        EngineCommandsTest.Result scrub = EngineCommandsTest.run("scrub", "rv", "--replicas", "n1");
        assertEquals(2, scrub.code());
        assertTrue(scrub.err().contains("--replicas: peer 'n1' is not ID=HOST:PORT"), scrub.err());
        EngineCommandsTest.Result serve = EngineCommandsTest.run("serve", "--data", data(1), "--replica-id", "n1");
        assertEquals(2, serve.code());
        assertTrue(serve.err().contains("--replica-id needs --replica-listen"), serve.err());
    }

    @Test
    void serveWarnsWhenItListensElsewhereThanItsPeersNameIt() throws Exception {
        int named = FreePorts.next();
        int actual = FreePorts.next();
        EngineCommandsTest.Result c = EngineCommandsTest.run("volume", "create", "--data", data(1), "rv", "--size", "64KiB",
                "--format", "512+8", "--replica-id", "n1", "--replicas", "n1=127.0.0.1:" + named + ",n2=127.0.0.1:1");
        assertEquals(0, c.code(), c.err());
        try (ServeThread s = new ServeThread("serve", "--data", data(1), "--transport", "local", "--listen",
                "replicated-serve-elsewhere", "--replica-id", "n1", "--replica-listen", "127.0.0.1:" + actual)) {
            s.awaitOutput(o -> o.contains("warning"));
            assertTrue(s.out().contains("warning: the peers of rv name n1 at 127.0.0.1:" + named
                    + ", but it listens on 127.0.0.1:" + actual + ": they cannot reach it"), s.out() + " / " + s.err());
            assertEquals(0, s.stop(), s.out() + " / " + s.err());
        }
    }
}
