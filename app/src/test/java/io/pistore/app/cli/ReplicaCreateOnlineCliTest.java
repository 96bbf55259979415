package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.FreePorts;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated volume created while its peers' serves run: 'volume create --replicas' on each peer's
 * data directory reaches its serve through the control socket, which creates the replica, joins the
 * group and serves the volume at once; the group elects a leader once a majority has theirs.
 */
class ReplicaCreateOnlineCliTest {
    @TempDir
    Path dir;

    private String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    @Test
    void eachRunningServeCreatesItsReplicaAndServesTheVolume() throws Exception {
        String[] address = new String[4];
        for (int i = 1; i <= 3; i++) {
            address[i] = "127.0.0.1:" + FreePorts.next();
        }
        String peers = "n1=" + address[1] + ",n2=" + address[2] + ",n3=" + address[3];
        List<ServeThread> serves = new ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                Files.createDirectories(Path.of(data(i)));
                serves.add(new ServeThread("serve", "--data", data(i), "--transport", "local", "--listen",
                        "online-create-" + i, "--replica-id", "n" + i, "--replica-listen", address[i]));
            }
            for (ServeThread s : serves) {
                s.awaitOutput(o -> o.contains("volumes change live"));
            }
            EngineCommandsTest.Result wrongId = EngineCommandsTest.run("volume", "create", "--data", data(1), "rv",
                    "--size", "64KiB", "--format", "512+8", "--replica-id", "n2", "--replicas", peers);
            assertEquals(2, wrongId.code(), wrongId.out() + wrongId.err());
            assertTrue(wrongId.err().contains("this serve's replica peer is n1, not n2"), wrongId.err());
            for (int i = 1; i <= 3; i++) {
                EngineCommandsTest.Result c = EngineCommandsTest.run("volume", "create", "--data", data(i), "rv",
                        "--size", "64KiB", "--format", "512+8", "--replica-id", "n" + i, "--replicas", peers);
                assertEquals(0, c.code(), c.out() + c.err());
                assertEquals("created replica n" + i + " of rv: 128 blocks, 512+8 type=1 guard=crc16 pi=first; peers "
                        + peers + "; served here (a leader once a majority of the peers have theirs)\n", c.out());
            }
            EngineCommandsTest.Result again = EngineCommandsTest.run("volume", "create", "--data", data(2), "rv",
                    "--size", "64KiB", "--format", "512+8", "--replica-id", "n2", "--replicas", peers);
            assertEquals(2, again.code(), again.out() + again.err());
            assertTrue(again.err().contains("this serve has a volume named rv already"), again.err());

            byte[] first = new byte[4 * 512];
            new Random(40).nextBytes(first);
            try (BlockTransport t = new LocalTransportProvider().create()) {
                try (HostConnection c = t.connect("online-create-1", new ConnectOptions(1, 8))) {
                    BlockDevice.open(c, "rv").writeSync(8, ByteBuffer.wrap(first));
                }
                for (int i = 1; i <= 3; i++) {
                    try (HostConnection c = t.connect("online-create-" + i, new ConnectOptions(1, 8))) {
                        ByteBuffer back = ByteBuffer.allocate(first.length);
                        BlockDevice.open(c, "rv").readSync(8, back);
                        assertArrayEquals(first, back.array(), "read through serve " + i);
                    }
                }
            }
            EngineCommandsTest.Result grow = EngineCommandsTest.run("volume", "resize", "rv", "--data", data(2), "--size",
                    "128KiB");
            assertEquals(0, grow.code(), grow.out() + grow.err());
            assertEquals("resized rv: 128 -> 256 blocks on every replica of its group\n", grow.out());
            EngineCommandsTest.Result shrink = EngineCommandsTest.run("volume", "resize", "rv", "--data", data(1), "--size",
                    "64KiB");
            assertEquals(2, shrink.code(), shrink.out() + shrink.err());
            assertTrue(shrink.err().contains("shrinking to 128 would drop data"), shrink.err());
            byte[] late = new byte[512];
            new Random(41).nextBytes(late);
            try (BlockTransport t = new LocalTransportProvider().create();
                 HostConnection c = t.connect("online-create-3", new ConnectOptions(1, 8))) {
                io.pistore.testkit.Eventually.await("serve 3 to serve the grown volume",
                        () -> c.relistVolumes().join().get(0).blockCount() == 256);
                BlockDevice.open(c, "rv").writeSync(200, ByteBuffer.wrap(late));
            }
            try (BlockTransport t = new LocalTransportProvider().create();
                 HostConnection c = t.connect("online-create-1", new ConnectOptions(1, 8))) {
                // each peer serves the new size once its replica applied the growth
                io.pistore.testkit.Eventually.await("serve 1 to serve the grown volume",
                        () -> c.relistVolumes().join().get(0).blockCount() == 256);
                ByteBuffer back = ByteBuffer.allocate(late.length);
                BlockDevice.open(c, "rv").readSync(200, back);
                assertArrayEquals(late, back.array(), "a block past the old end, written through serve 3");
            }
            EngineCommandsTest.Result status = EngineCommandsTest.run("replicas", "status", "rv", "--replicas", peers);
            assertEquals(0, status.code(), status.out() + status.err());
            assertTrue(status.out().strip().endsWith("3 of 3 peers answered"), status.out());
            assertTrue(Files.exists(Path.of(data(3), "replication", "replicas", "rv.data")), "n3's replica files");
            EngineCommandsTest.Result list = EngineCommandsTest.run("volume", "list", "--data", data(2));
            assertEquals(0, list.code(), list.out() + list.err());
            assertTrue(list.out().lines().anyMatch(l -> l.startsWith("rv ") && l.endsWith("replicated on " + peers)),
                    "listed through the running serve: " + list.out());
        } finally {
            for (ServeThread s : serves) {
                assertEquals(0, s.stop(), s.out() + " / " + s.err());
            }
        }
    }
}
