package io.pistore.app.cli;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.replication.ReplicaPeers;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pistore volume delete NAME --data DIR --replica-only}: a stopped peer's replica deleted
 * without its group (files, peer list, record, Raft directory), so the name can be created again;
 * refused while the directory is held, for a volume that is not replicated, and for nothing there.
 */
class ReplicaOnlyDeleteTest {
    @TempDir
    Path dir;


    private Path data() {
        return dir.resolve("d1");
    }

    private Path raftDir() {
        return data().resolve("replication").resolve("raft").resolve(ReplicaPeers.groupId("rv").getUuid().toString());
    }

    private static EngineCommandsTest.Result create(Path data, String peers) {
        return EngineCommandsTest.run("volume", "create", "--data", data.toString(), "rv", "--size", "64KiB",
                "--format", "512+8", "--replica-id", "n1", "--replicas", peers);
    }

    @Test
    void aStoppedPeersReplicaGoesWithItsRaftLogAndTheNameIsFreeAgain() throws Exception {
        String address = "127.0.0.1:" + FreePorts.next();
        String peers = "n1=" + address; // a group of one: it elects itself, so its serve writes a Raft log
        EngineCommandsTest.Result c = create(data(), peers);
        assertEquals(0, c.code(), c.err());
        ServeThread serve = new ServeThread("serve", "--data", data().toString(), "--transport", "local", "--listen",
                "replica-only-delete", "--replica-id", "n1", "--replica-listen", address);
        try {
            serve.awaitOutput(o -> o.contains("rv replicated on") && o.contains(" volume(s) from "));
            EngineCommandsTest.Result held = EngineCommandsTest.run("volume", "delete", "rv", "--data", data().toString(),
                    "--replica-only");
            assertEquals(2, held.code(), held.out() + held.err());
            assertTrue(held.err().contains("--replica-only works on a stopped peer: stop its serve first"), held.err());
            assertEquals(1, held.err().strip().split("\n").length, held.err());
        } finally {
            assertEquals(0, serve.stop(), serve.out() + " / " + serve.err());
        }
        assertTrue(Files.isDirectory(raftDir()), "the serve wrote the group's Raft directory");
        EngineCommandsTest.Result d = EngineCommandsTest.run("volume", "delete", "rv", "--data", data().toString(),
                "--replica-only");
        assertEquals(0, d.code(), d.out() + d.err());
        assertTrue(d.out().startsWith("deleted this peer's replica of rv in " + data().resolve("replication")
                + " (data, metadata and journal, Raft log and snapshots, peer list"), d.out());
        assertTrue(d.out().contains("no other peer was asked"), d.out());
        assertTrue(d.out().contains("its peer list named " + peers + "; if volume rv lives on there, remove this peer "
                + "from its group with 'pistore replicas remove'"), d.out());
        assertFalse(Files.exists(raftDir()), "Raft directory");
        Path replication = data().resolve("replication");
        assertFalse(Files.exists(replication.resolve("groups").resolve("rv.peers")));
        assertFalse(Files.exists(replication.resolve("groups").resolve("rv.applied")));
        assertFalse(Files.exists(replication.resolve("replicas").resolve("rv.data")));
        assertFalse(Files.exists(replication.resolve("replicas").resolve("rv.meta")));
        // a second time: nothing left, one line
        EngineCommandsTest.Result again = EngineCommandsTest.run("volume", "delete", "rv", "--data",
                data().toString(), "--replica-only");
        assertEquals(2, again.code(), again.out() + again.err());
        assertTrue(again.err().contains("no replica of volume rv in " + replication), again.err());
        // the name can be created again, as a new, empty replica
        EngineCommandsTest.Result recreated = create(data(), peers);
        assertEquals(0, recreated.code(), recreated.err());
    }

    @Test
    void aHeldDirectoryAPlainVolumeAndBadArgumentsAreRefusedWithOneLine() throws Exception {
        assertEquals(0, create(data(), "n1=127.0.0.1:9,n2=127.0.0.1:10,n3=127.0.0.1:11").code());
        Files.createDirectories(raftDir().resolve("current")); // as Ratis leaves it
        Files.writeString(raftDir().resolve("current").resolve("log_inprogress_0"), "entries");
        // held by another owner (the serve of this peer, here this test)
        try (VolumeStore held = VolumeStore.open(data(), 0, "pistore serve")) {
            EngineCommandsTest.Result r = EngineCommandsTest.run("volume", "delete", "rv", "--data", data().toString(),
                    "--replica-only");
            assertEquals(2, r.code(), r.out() + r.err());
            assertTrue(r.err().contains("stop its serve first"), r.err());
        }
        try (VolumeStore held = VolumeStore.open(data().resolve("replication").resolve("replicas"), 0, "pistore replica n1")) {
            EngineCommandsTest.Result r = EngineCommandsTest.run("volume", "delete", "rv", "--data", data().toString(),
                    "--replica-only");
            assertEquals(2, r.code(), r.out() + r.err());
            assertTrue(r.err().contains("stop its serve first"), r.err());
        }
        assertTrue(Files.exists(raftDir().resolve("current").resolve("log_inprogress_0")), "nothing deleted while held");
        EngineCommandsTest.Result forced = EngineCommandsTest.run("volume", "delete", "rv", "--data", data().toString(),
                "--replica-only", "--force");
        assertEquals(2, forced.code());
        assertTrue(forced.err().contains("--replica-only deletes one stopped peer's replica and takes no --force"),
                forced.err());
        // a plain volume of the data directory is not a replica
        assertEquals(0, EngineCommandsTest.run("volume", "create", "--data", data().toString(), "plain", "--size",
                "64KiB").code());
        EngineCommandsTest.Result plain = EngineCommandsTest.run("volume", "delete", "plain", "--data",
                data().toString(), "--replica-only");
        assertEquals(2, plain.code());
        assertTrue(plain.err().contains("volume plain in " + data() + " is not replicated: --replica-only deletes only "
                + "a replica; delete it without --replica-only"), plain.err());
        assertTrue(Files.exists(data().resolve("plain.data")), "the plain volume is untouched");
        // and the replica is deleted once the directory is free
        EngineCommandsTest.Result d = EngineCommandsTest.run("volume", "delete", "rv", "--data", data().toString(),
                "--replica-only");
        assertEquals(0, d.code(), d.out() + d.err());
        assertFalse(Files.exists(raftDir()));
    }
}
