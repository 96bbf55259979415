package io.pistore.replication.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.replication.raft.UnreadableEntryException;
import java.io.IOException;
import java.io.SyncFailedException;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

/** The one line a stopped group is told in names the cure that fits its cause. */
class StorageFailureLineTest {
    private static final RaftPeerId N3 = RaftPeerId.valueOf("n3");

    @Test
    void eachCauseGetsItsCure() {
        String full = StorageFailureRestarts.line("rv", N3, "write its Raft log", new IOException("No space left on device"), 2000);
        assertEquals("volume rv: replica n3 could not write its Raft log (No space left on device); its group stops here and"
                + " starts again from its files in 2.0 s (make room on the file system of its data directory)", full);
        String unsynced = StorageFailureRestarts.line("rv", N3, "apply log entry 9 to its replica",
                new SyncFailedException("fsync failed"), -1);
        assertTrue(unsynced.endsWith("its group stops here: make room on the file system of its data directory, then restart"
                + " this serve"), unsynced);
        String unread = StorageFailureRestarts.line("rv", N3, "apply log entry 412 to its replica", new UnreadableEntryException(
                "log entry 412 holds a command this build cannot read (unknown replica command code 99)"), -1);
        assertEquals("volume rv: replica n3 could not apply log entry 412 to its replica (log entry 412 holds a command this"
                + " build cannot read (unknown replica command code 99)); its group stops here: run the build of the group's"
                + " other peers here (every peer of a group runs one build), then restart this serve", unread);
    }
}
