package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One owner per data directory: a directory {@link VolumeStore} holds {@code DIR/.lock} while open,
 * in this process and against others ({@link LockProbe} runs in a JVM of its own).
 */
class DataDirLockTest {
    static final long PID = ProcessHandle.current().pid();

    @TempDir
    Path dir;

    @Test
    void aSecondOpenInThisProcessIsRefusedNamingTheFirstUntilItCloses() throws Exception {
        Path data = dir.resolve("data");
        Path link = Files.createSymbolicLink(dir.resolve("link"), Files.createDirectories(data));
        try (VolumeStore s = VolumeStore.open(data, 0, "first owner")) {
            s.create("v", BlockFormat.of(512, 8), 8);
            DataDirInUseException e = assertThrows(DataDirInUseException.class, () -> VolumeStore.open(data));
            assertEquals(data + " is in use by pid " + PID + " (first owner), a store already open in this process",
                    e.getMessage());
            assertEquals(PID, e.ownerPid());
            assertEquals("first owner", e.owner());
            assertEquals(data, e.dir());
            DataDirInUseException viaLink = assertThrows(DataDirInUseException.class, () -> VolumeStore.open(link));
            assertTrue(viaLink.getMessage().startsWith(link + " is in use by pid " + PID), viaLink.getMessage());
            assertNotNull(s.get("v"), "a refused open leaves the owner's volumes alone");
        }
        try (VolumeStore s = VolumeStore.open(link)) {
            assertNotNull(s.get("v"));
        }
    }

    @Test
    void theLockFileNamesTheOwnerOnOneLineAndStaysAfterClose() throws Exception {
        Path lock = dir.resolve(DataDirLock.FILE);
        try (VolumeStore s = VolumeStore.open(dir, 0, "pistore  serve\n--data x")) {
            assertEquals("pid=" + PID + "\nowner=pistore serve --data x\n", Files.readString(lock));
        }
        assertTrue(Files.exists(lock));
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertEquals("pid=" + PID + "\nowner=" + VolumeStore.DEFAULT_OWNER + "\n", Files.readString(lock),
                    "a shorter owner line leaves nothing of the longer one");
        }
    }

    @Test
    void anotherProcessIsRefusedWhileOpenAndOpensAfterClose() throws Exception {
        VolumeStore s = VolumeStore.open(dir, 0, "pistore volume create");
        try {
            assertArrayEquals(new String[] {"2", dir + " is in use by pid " + PID + " (pistore volume create)"},
                    LockProbe.tryOpen(dir));
        } finally {
            s.close();
        }
        assertArrayEquals(new String[] {"0", "opened"}, LockProbe.tryOpen(dir));
    }

    @Test
    void anOpenRefusedInThisProcessLeavesTheLockHeldAgainstOthers() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir, 0, "owner")) {
            assertThrows(DataDirInUseException.class, () -> VolumeStore.open(dir));
            assertThrows(DataDirInUseException.class, () -> VolumeStore.open(dir));
            String[] other = LockProbe.tryOpen(dir);
            assertEquals("2", other[0], "another process got the directory: " + other[1]);
        }
    }

    @Test
    void aKilledOwnerLeavesNoStaleLock() throws Exception {
        long probePid;
        try (LockProbe holder = LockProbe.start("hold", dir)) {
            assertEquals("opened", holder.firstLine());
            probePid = holder.process.pid();
            DataDirInUseException e = assertThrows(DataDirInUseException.class, () -> VolumeStore.open(dir));
            assertEquals(dir + " is in use by pid " + probePid + " (lock probe)", e.getMessage());
            assertEquals(probePid, e.ownerPid());
        } // kill -9
        assertTrue(Files.readString(dir.resolve(DataDirLock.FILE)).contains("pid=" + probePid),
                "the file still names the dead owner; only the kernel's lock counts");
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertTrue(Files.readString(dir.resolve(DataDirLock.FILE)).contains("pid=" + PID));
        }
    }

    @Test
    void closingTwiceIsHarmlessAndMemoryStoresTakeNoLock() throws Exception {
        VolumeStore s = VolumeStore.open(dir);
        s.close();
        s.close();
        try (VolumeStore again = VolumeStore.open(dir);
             VolumeStore m1 = VolumeStore.inMemory();
             VolumeStore m2 = VolumeStore.inMemory()) {
            m1.create("v", BlockFormat.of(512, 8), 8);
            m2.create("v", BlockFormat.of(512, 8), 8);
            assertFalse(m1.isDurable());
        }
    }

    /**
     * A volume whose close throws a runtime exception (a bug, not an I/O error) still leaves the
     * directory free: the other volumes are closed and the lock released, so reopening in this
     * process works and finds them whole; the failure is reported, naming the volume.
     */
    @Test
    void aVolumeThatFailsToCloseStillReleasesTheDirectory() throws Exception {
        byte[] written = new byte[512];
        java.util.Arrays.fill(written, (byte) 0x5a);
        VolumeStore s = VolumeStore.open(dir);
        s.attach(new ForwardingVolume(new MemoryVolume("broken", BlockFormat.of(512, 0), 8)) {
            @Override
            public void close() {
                throw new IllegalStateException("close refused");
            }
        });
        s.create("a", BlockFormat.of(512, 0), 8).write(3, 1, io.pistore.integrity.ScatterList.wrap(written.clone()), null, false);
        s.create("z", BlockFormat.of(512, 0), 8);
        java.io.IOException e = assertThrows(java.io.IOException.class, s::close);
        assertTrue(e.getMessage().contains("volume broken did not close")
                && e.getMessage().contains("close refused"), e.getMessage());
        try (VolumeStore again = VolumeStore.open(dir)) {
            byte[] read = new byte[512];
            again.get("a").read(3, 1, io.pistore.integrity.ScatterList.wrap(read), null);
            assertArrayEquals(written, read, "a volume closed beside the failing one keeps its write");
            assertNotNull(again.get("z"));
        }
    }
}
