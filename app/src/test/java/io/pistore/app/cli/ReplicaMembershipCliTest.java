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
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Membership changes through the CLI, as the docs run them: three peers' create and serve, then a
 * fourth serve joins with 'replicas add', a member leaves with 'replicas remove', a fifth replaces
 * another with 'replicas replace'; status, reads and a scrub through the new members.
 */
class ReplicaMembershipCliTest {
    @TempDir
    Path dir;


    private String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    private static byte[] read(BlockTransport t, int serve, long lba, int bytes) throws Exception {
        try (HostConnection c = t.connect("membership-serve-" + serve, new ConnectOptions(1, 8))) {
            ByteBuffer back = ByteBuffer.allocate(bytes);
            BlockDevice.open(c, "rv").readSync(lba, back);
            return back.array();
        }
    }

    @Test
    void aPeerIsAddedOneRemovedAndOneReplacedWithTheCli() throws Exception {
        String[] address = new String[6];
        for (int i = 1; i <= 5; i++) {
            address[i] = "127.0.0.1:" + FreePorts.next();
        }
        String peers = "n1=" + address[1] + ",n2=" + address[2] + ",n3=" + address[3];
        for (int i = 1; i <= 3; i++) {
            EngineCommandsTest.Result c = EngineCommandsTest.run("volume", "create", "--data", data(i), "rv", "--size",
                    "64KiB", "--format", "512+8", "--replica-id", "n" + i, "--replicas", peers);
            assertEquals(0, c.code(), c.err());
        }
        List<ServeThread> serves = new ArrayList<>();
        try {
            for (int i = 1; i <= 5; i++) {
                Files.createDirectories(Path.of(data(i)));
                serves.add(new ServeThread("serve", "--data", data(i), "--transport", "local", "--listen",
                        "membership-serve-" + i, "--replica-id", "n" + i, "--replica-listen", address[i]));
            }
            for (ServeThread s : serves) {
                s.awaitOutput(o -> o.contains("volumes change live"));
            }
            byte[] first = new byte[4 * 512];
            new Random(30).nextBytes(first);
            try (BlockTransport t = new LocalTransportProvider().create()) {
                try (HostConnection c = t.connect("membership-serve-1", new ConnectOptions(1, 8))) {
                    BlockDevice.open(c, "rv").writeSync(8, ByteBuffer.wrap(first));
                }

                EngineCommandsTest.Result add = EngineCommandsTest.run("replicas", "add", "rv", "--data", data(4),
                        "--replicas", peers);
                assertEquals(0, add.code(), add.out() + add.err());
                assertTrue(add.out().startsWith("volume rv: replica n4 joined, caught up; members n1,n2,n3 -> "
                        + "n1,n2,n3,n4\n"), add.out());
                assertArrayEquals(first, read(t, 4, 8, first.length), "the new member serves what was written before");
                EngineCommandsTest.Result again = EngineCommandsTest.run("replicas", "add", "rv", "--data", data(4),
                        "--replicas", peers);
                assertEquals(2, again.code(), again.out() + again.err());
                assertTrue(again.err().contains("this serve has a volume named rv already"), again.err());

                EngineCommandsTest.Result status = EngineCommandsTest.run("replicas", "status", "rv", "--replicas",
                        peers);
                assertEquals(0, status.code(), status.out() + status.err());
                String[] lines = status.out().strip().split("\n");
                assertEquals(5, lines.length, status.out());
                assertTrue(lines[3].matches("n4 +127\\.0\\.0\\.1:\\d+ +follower +last=\\d+ committed=\\d+ applied=\\d+ "
                        + "lag=\\d+ snapshot=(none|\\d+)"), status.out());
                assertTrue(lines[4].matches("volume rv: leader n[123], 4 of 4 peers answered"), status.out());

                // a scrub with the list of before the change checks the member added since, and says so
                EngineCommandsTest.Result added = EngineCommandsTest.run("scrub", "rv", "--replicas", peers);
                assertEquals(0, added.code(), added.out() + added.err());
                assertTrue(added.out().contains("replica n4 is a member that --replicas does not name: checked too\n"),
                        added.out());
                assertTrue(added.out().contains(") on 4 replicas (n1,n2,n3,n4): no bad copies"), added.out());
                // the joining serve logs the reply's lines one by one, as the command prints them
                String log = serves.get(3).out() + serves.get(3).err();
                assertTrue(log.contains("control: volume rv: replica n4 joined, caught up; members n1,n2,n3 -> "
                        + "n1,n2,n3,n4 (user "), log);
                assertTrue(log.contains("control: rv replicated on n1="), log);

                String all = peers + ",n4=" + address[4];
                EngineCommandsTest.Result unknown = EngineCommandsTest.run("replicas", "remove", "rv", "--peer", "n9",
                        "--replicas", all);
                assertEquals(2, unknown.code(), unknown.out() + unknown.err());
                assertTrue(unknown.err().contains("peer n9 is not a member of volume rv (members n1,n2,n3,n4)"),
                        unknown.err());
                EngineCommandsTest.Result rm = EngineCommandsTest.run("replicas", "remove", "rv", "--peer", "n2",
                        "--replicas", all);
                assertEquals(0, rm.code(), rm.out() + rm.err());
                assertEquals("volume rv: members n1,n2,n3,n4 -> n1,n3,n4\npeer n2 left the group of volume rv and "
                        + "deleted its replica\n", rm.out());
                assertTrue(!Files.exists(Path.of(data(2), "replication", "replicas", "rv.data")), "n2's replica is gone");

                EngineCommandsTest.Result rep = EngineCommandsTest.run("replicas", "replace", "rv", "--old", "n3",
                        "--data", data(5), "--replicas", all);
                assertEquals(0, rep.code(), rep.out() + rep.err());
                assertTrue(rep.out().startsWith("volume rv: replica n5 joined, caught up; members n1,n3,n4 -> "
                        + "n1,n4,n5\npeer n3 left the group of volume rv and deleted its replica\n"), rep.out());

                byte[] second = new byte[2 * 512];
                new Random(31).nextBytes(second);
                try (HostConnection c = t.connect("membership-serve-5", new ConnectOptions(1, 8))) {
                    BlockDevice.open(c, "rv").writeSync(100, ByteBuffer.wrap(second));
                }
                for (int i : new int[] {1, 4, 5}) {
                    assertArrayEquals(first, read(t, i, 8, first.length), "first write through serve " + i);
                    assertArrayEquals(second, read(t, i, 100, second.length), "second write through serve " + i);
                }
            }
            String members = "n1=" + address[1] + ",n4=" + address[4] + ",n5=" + address[5];
            EngineCommandsTest.Result scrub = EngineCommandsTest.run("scrub", "rv", "--replicas", members);
            assertEquals(0, scrub.code(), scrub.out() + scrub.err());
            assertTrue(scrub.out().contains("checked 128 blocks (512+8 type=1 guard=crc16 pi=first) on 3 replicas "
                    + "(n1,n4,n5): no bad copies, 0 rewritten, 0 bad on every replica"), scrub.out());
            // the first list names two members removed since: said, not checked; the members are
            EngineCommandsTest.Result old = EngineCommandsTest.run("scrub", "rv", "--replicas", peers);
            assertEquals(0, old.code(), old.out() + old.err());
            assertTrue(old.out().contains("replica n2 is not a member of the group of volume rv (members n1,n4,n5): not "
                    + "checked\n"), old.out());
            assertTrue(old.out().contains("replica n3 is not a member of the group of volume rv (members n1,n4,n5): not "
                    + "checked\n"), old.out());
            assertTrue(old.out().contains("replica n4 is a member that --replicas does not name: checked too"), old.out());
            assertTrue(old.out().contains(") on 3 replicas (n1,n4,n5): no bad copies"), old.out());
            EngineCommandsTest.Result after = EngineCommandsTest.run("replicas", "status", "rv", "--replicas", peers);
            String[] lines = after.out().strip().split("\n");
            assertTrue(lines[1].startsWith("n2 ") && lines[1].contains("not a member of the group"), after.out());
            assertTrue(lines[lines.length - 1].matches("volume rv: leader n[145], 3 of 3 peers answered"), after.out());
        } finally {
            for (ServeThread s : serves) {
                assertEquals(0, s.stop(), s.out() + " / " + s.err());
            }
        }
    }

    @Test
    void addNeedsARunningServeWithAReplicaPeer() throws Exception {
        Files.createDirectories(Path.of(data(1)));
        EngineCommandsTest.Result noServe = EngineCommandsTest.run("replicas", "add", "rv", "--data", data(1),
                "--replicas", "n1=127.0.0.1:1");
        assertEquals(2, noServe.code());
        assertTrue(noServe.err().contains("no serve runs on --data " + data(1)), noServe.err());
        try (ServeThread s = new ServeThread("serve", "--data", data(1), "--transport", "local", "--listen",
                "membership-plain")) {
            s.awaitOutput(o -> o.contains("volumes change live"));
            EngineCommandsTest.Result plain = EngineCommandsTest.run("replicas", "add", "rv", "--data", data(1),
                    "--replicas", "n1=127.0.0.1:1");
            assertEquals(2, plain.code());
            assertTrue(plain.err().contains("this serve runs no replica peer: start it with --replica-id and "
                    + "--replica-listen"), plain.err());
            assertEquals(0, s.stop(), s.out() + " / " + s.err());
        }
        EngineCommandsTest.Result badPeer = EngineCommandsTest.run("replicas", "remove", "rv", "--peer", "n1",
                "--replicas", "n1");
        assertEquals(2, badPeer.code());
        assertTrue(badPeer.err().contains("--replicas: peer 'n1' is not ID=HOST:PORT"), badPeer.err());
    }
}
