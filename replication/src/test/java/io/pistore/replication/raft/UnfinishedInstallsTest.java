package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The directories of snapshot installations that never finished go at a group's start; nothing else there does. */
class UnfinishedInstallsTest {
    @TempDir
    Path dir;

    @Test
    void unfinishedInstallsGoAndTheRestStays() throws Exception {
        Path tmp = dir.resolve("tmp");
        for (int i = 0; i < 3; i++) { // as Ratis leaves them: a directory per try, the snapshot's own inside
            Path d = Files.createDirectories(tmp.resolve("snapshot-" + i).resolve("snapshot.1_1705"));
            Files.write(d.resolve("data"), new byte[100]);
        }
        Files.createDirectories(tmp.resolve("other"));
        VolumeSnapshots.dropUnfinishedInstalls(tmp);
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(List.of("other"), left.map(p -> p.getFileName().toString()).toList());
        }
        VolumeSnapshots.dropUnfinishedInstalls(dir.resolve("none")); // no tmp directory yet: nothing to do
        assertTrue(Files.isDirectory(tmp.resolve("other")));
    }
}
