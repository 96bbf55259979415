package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.testing.AsNobody;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory and every file pistore makes in it are its owner's alone ({@code 0700} and
 * {@code 0600}), whatever the umask; another user reads nothing; a directory made by an earlier
 * version, more open, is used as it is and named in warnings with the fix.
 */
class PrivateVolumeFilesTest {
    private static final List<String> FILES = List.of(".lock", "v1.data", "v1.meta", "v1.journal", "v1.volume");

    @TempDir
    Path tmp;

    /** The mode of every entry of {@code dir}, and of {@code dir} itself as ".". */
    private static Map<String, String> modes(Path dir) throws IOException {
        Map<String, String> m = new TreeMap<>();
        m.put(".", PrivateFiles.mode(dir));
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                m.put(p.getFileName().toString(), PrivateFiles.mode(p));
            }
        }
        return m;
    }

    private static Map<String, String> privateModes() {
        Map<String, String> m = new TreeMap<>();
        m.put(".", "0700");
        FILES.forEach(f -> m.put(f, "0600"));
        return m;
    }

    @Test
    void aNewDirectoryAndItsFilesAreTheOwnersAlone() throws Exception {
        Path dir = tmp.resolve("a/data");
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v1", BlockFormat.of(512, 8), 64);
            assertTrue(s.openNotes().isEmpty(), s.openNotes().toString());
        }
        assertEquals(privateModes(), modes(dir));
        assertEquals("0700", PrivateFiles.mode(tmp.resolve("a")), "a parent made on the way is private too");
    }

    @Test
    void aLooseUmaskDoesNotLoosenTheModes() throws Exception {
        Path dir = tmp.resolve("data");
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "umask 000; exec \"$0\" -XX:TieredStopAtLevel=1 -cp \"$1\" "
                + PrivateFilesProbe.class.getName() + " \"$2\"", java, System.getProperty("java.class.path"),
                dir.toString()).redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the probe did not end");
        assertEquals(0, p.exitValue(), out);
        assertEquals("made", out.strip());
        assertEquals(privateModes(), modes(dir));
        // the control: that umask does make a world-writable file where nothing sets the mode
        Process q = new ProcessBuilder("sh", "-c", "umask 000; : > \"$0\"", tmp.resolve("plain").toString()).start();
        assertTrue(q.waitFor(60, TimeUnit.SECONDS));
        assertEquals("0666", PrivateFiles.mode(tmp.resolve("plain")));
    }

    @Test
    void nobodyReadsNoFileOfADataDirectory() throws Exception {
        AsNobody.assumeAvailable();
        Path base = AsNobody.traversableDir("pistore-perm-");
        try {
            Path dir = base.resolve("data");
            try (VolumeStore s = VolumeStore.open(dir)) {
                s.create("v1", BlockFormat.of(512, 8), 64);
            }
            Path open = base.resolve("control.txt");
            Files.writeString(open, "readable\n");
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
            assertTrue(AsNobody.canRead(open), "the check itself: nobody reads a 0644 file beside the directory");
            assertFalse(AsNobody.canList(dir), "nobody lists the data directory");
            for (String f : FILES) {
                assertFalse(AsNobody.canRead(dir.resolve(f)), "nobody reads " + f);
            }
            // even with the directory opened for passing through, each file keeps nobody out by its own mode
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
            for (String f : FILES) {
                assertFalse(AsNobody.canRead(dir.resolve(f)), "nobody reads " + f + " through a 0711 directory");
            }
        } finally {
            io.pistore.testkit.TestFiles.deleteTree(base);
        }
    }

    @Test
    void aDirectoryOfAnEarlierVersionWorksAndWarnsWithTheFix() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("old"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v1", BlockFormat.of(512, 8), 64);
            s.create("v2", BlockFormat.of(512, 8), 64);
        }
        for (String f : List.of("v1.data", "v1.meta", "v1.volume")) { // as an earlier version made them
            Files.setPosixFilePermissions(dir.resolve(f), PosixFilePermissions.fromString("rw-r--r--"));
        }
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertEquals(List.of(
                    "warning: data directory " + dir + " is open to group or others (0755): chmod 700 " + dir,
                    "warning: volume v1: files readable by group or others (v1.data 0644, v1.meta 0644, "
                            + "v1.volume 0644): chmod 600 " + dir.resolve("v1") + ".*"), s.openNotes());
            assertEquals(2, s.list().size(), "both volumes open");
        }
        assertEquals("0755", PrivateFiles.mode(dir), "nothing changes the modes of what exists");
        assertEquals("0644", PrivateFiles.mode(dir.resolve("v1.data")));
        Files.setPosixFilePermissions(dir, PrivateFiles.DIRECTORY);
        for (String f : List.of("v1.data", "v1.meta", "v1.volume")) {
            Files.setPosixFilePermissions(dir.resolve(f), PrivateFiles.FILE);
        }
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertTrue(s.openNotes().isEmpty(), "after the fix the warnings are gone: " + s.openNotes());
        }
    }

    @Test
    void aFileWrittenForcedIsPrivateAndReplacesWhatWasThere() throws Exception {
        Path f = tmp.resolve("record");
        PrivateFiles.writeForced(f, "index 12345678\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("index 12345678\n", Files.readString(f));
        assertEquals("0600", PrivateFiles.mode(f));
        PrivateFiles.writeForced(f, "index 9\n".getBytes(StandardCharsets.UTF_8)); // shorter: truncated, not overlaid
        assertEquals("index 9\n", Files.readString(f));
    }

    @Test
    void tightenMakesALibrarysTreePrivateAndLeavesWhatALinkPointsTo() throws Exception {
        Path outside = Files.writeString(tmp.resolve("outside.txt"), "x");
        Files.setPosixFilePermissions(outside, PosixFilePermissions.fromString("rw-r--r--"));
        Path root = Files.createDirectories(tmp.resolve("raft/group/current"));
        Path segment = Files.writeString(root.resolve("log_inprogress_0"), "entries");
        for (Path p : List.of(tmp.resolve("raft"), tmp.resolve("raft/group"), root)) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Files.setPosixFilePermissions(segment, PosixFilePermissions.fromString("rw-r--r--"));
        Files.createSymbolicLink(root.resolve("link"), outside);
        PrivateFiles.tighten(tmp.resolve("raft"));
        assertEquals("0700", PrivateFiles.mode(tmp.resolve("raft")));
        assertEquals("0700", PrivateFiles.mode(tmp.resolve("raft/group")));
        assertEquals("0700", PrivateFiles.mode(root));
        assertEquals("0600", PrivateFiles.mode(segment));
        assertEquals("0644", PrivateFiles.mode(outside), "a link is not followed");
    }
}
