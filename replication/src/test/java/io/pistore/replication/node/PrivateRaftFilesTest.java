package io.pistore.replication.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.PrivateFiles;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.testing.AsNobody;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A replica peer's directory (its replicas, peer lists, Raft logs and snapshots) is its owner's
 * alone: every directory 0700, and no other user reads any file of it, a Raft log included.
 */
class PrivateRaftFilesTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final ReplicationSettings SETTINGS = ThreePeers.SETTINGS.withSnapshotEveryEntries(4);

    @Test
    void nobodyReadsNoFileOfAReplicaPeer() throws Exception {
        AsNobody.assumeAvailable();
        Path base = AsNobody.traversableDir("pistore-perm-");
        try (ThreePeers peers = ThreePeers.start(base, "rv", FORMAT, 64, SETTINGS)) {
            int l = peers.leader();
            Random r = new Random(3);
            try (ServedVolume s = new ServedVolume(peers.node(l), "rv")) {
                for (int i = 0; i < 8; i++) { // past a snapshot
                    byte[] d = new byte[FORMAT.dataSize()];
                    r.nextBytes(d);
                    s.device.writeSync(i, ByteBuffer.wrap(d));
                }
            }
            peers.awaitConverged();
            Path dir = peers.dir(l);
            List<Path> files = new ArrayList<>();
            List<String> openDirs = new ArrayList<>();
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.toList()) {
                    if (Files.isDirectory(p)) {
                        if (!"0700".equals(PrivateFiles.mode(p))) {
                            openDirs.add(dir.relativize(p) + " " + PrivateFiles.mode(p));
                        }
                    } else {
                        files.add(p);
                    }
                }
            }
            assertEquals(List.of(), openDirs, "every directory of the peer is 0700");
            assertTrue(files.stream().anyMatch(p -> p.toString().contains("/raft/") && p.getFileName().toString()
                    .startsWith("log_")), "a Raft log segment is there: " + files);
            Path control = base.resolve("control.txt");
            Files.writeString(control, "readable\n");
            Files.setPosixFilePermissions(control, PosixFilePermissions.fromString("rw-r--r--"));
            assertTrue(AsNobody.canRead(control), "the check itself: nobody reads a 0644 file beside the peer");
            assertFalse(AsNobody.canList(dir), "nobody lists the peer's directory");
            for (Path f : files) {
                assertFalse(AsNobody.canRead(f), "nobody reads " + dir.relativize(f));
            }
        } finally {
            io.pistore.testkit.TestFiles.deleteTree(base);
        }
    }
}
