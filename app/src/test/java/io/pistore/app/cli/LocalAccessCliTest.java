package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.EngineCommandsTest.Result;
import io.pistore.engine.volume.PrivateFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local side of a data directory through the CLI: what {@code volume create} makes is private,
 * an older, more open directory is used with one warning line per problem naming the fix, and
 * {@code serve --strict-permissions} refuses it.
 */
class LocalAccessCliTest {
    @TempDir
    Path dir;

    private static Result run(String... args) {
        return EngineCommandsTest.run(args);
    }

    private Path data() {
        return dir.resolve("data");
    }

    /** A data directory with volume v1 whose directory and data file are as an earlier version made them. */
    private Path olderDirectory() throws Exception {
        assertEquals(0, run("volume", "create", "--data", data().toString(), "v1", "--size", "64k").code());
        Files.setPosixFilePermissions(data(), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(data().resolve("v1.data"), PosixFilePermissions.fromString("rw-r--r--"));
        return data();
    }

    @Test
    void volumeCreateMakesAPrivateDirectory() throws Exception {
        Result r = run("volume", "create", "--data", data().toString(), "v1", "--size", "64k");
        assertEquals(0, r.code(), r.err());
        assertEquals("0700", PrivateFiles.mode(data()));
        assertEquals("0600", PrivateFiles.mode(data().resolve("v1.data")));
        Result list = run("volume", "list", "--data", data().toString());
        assertEquals(0, list.code(), list.err());
        assertEquals("", list.err(), "a private directory lists quietly");
    }

    @Test
    void listAndScrubSayWhatIsTooOpenAndHowToFixIt() throws Exception {
        Path d = olderDirectory();
        String dirLine = "pistore: warning: data directory " + d + " is open to group or others (0755): chmod 700 " + d;
        String volLine = "pistore: warning: volume v1: files readable by group or others (v1.data 0644): chmod 600 "
                + d.resolve("v1") + ".*";
        Result list = run("volume", "list", "--data", d.toString());
        assertEquals(0, list.code(), list.err());
        assertTrue(list.out().contains("v1 "), list.out());
        assertEquals(dirLine + "\n" + volLine + "\n", list.err());
        Result scrub = run("scrub", "--data", d.toString(), "v1");
        assertEquals(0, scrub.code(), scrub.err());
        assertTrue(scrub.err().contains(dirLine + "\n" + volLine + "\n"), scrub.err());
        assertEquals("0755", PrivateFiles.mode(d), "the modes stay as the operator left them");
    }

    @Test
    void strictPermissionsRefusesAnOpenDirectoryAndServesAPrivateOne() throws Exception {
        Path d = olderDirectory();
        Result r = run("serve", "--data", d.toString(), "--transport", "local", "--listen", "strict-test",
                "--strict-permissions");
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --strict-permissions: data directory " + d + " is open to group or others "
                + "(0755): chmod 700 " + d + " (and 1 more such line(s) without the option)\n", r.err());
        Files.setPosixFilePermissions(d, PrivateFiles.DIRECTORY);
        Files.setPosixFilePermissions(d.resolve("v1.data"), PrivateFiles.FILE);
        try (ServeThread serve = new ServeThread("serve", "--data", d.toString(), "--transport", "local", "--listen",
                "strict-test", "--strict-permissions")) {
            serve.awaitOutput(o -> o.contains("v1 "));
            assertTrue(serve.out().contains("v1 "), serve.out() + " / " + serve.err());
            assertFalse(serve.err().contains("warning"), serve.err());
            assertEquals(0, serve.stop(), serve.err());
        }
    }

    @Test
    void aKeyOrPskFileReadableByOthersStopsServe() throws Exception {
        Path[] made = io.pistore.security.tls.SelfSigned.create(dir.resolve("pki"));
        Path cert = made[0];
        Path key = made[1];
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-cert", cert.toString(),
                "--tls-key", key.toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: " + key + " is readable by others (0644): chmod 600 " + key + "\n", r.err());
        assertEquals("", r.out(), "nothing was served");

        Path psk = dir.resolve("keys.psk");
        Files.writeString(psk, "alice:00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(psk, PosixFilePermissions.fromString("rw-r--r--"));
        r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-psk", psk.toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: " + psk + " is readable by others (0644): chmod 600 " + psk + "\n", r.err());
        assertEquals("", r.out(), "nothing was served");
    }

    /**
     * The tests' class path as nobody may read it: jars from places nobody cannot enter (the Maven
     * repository under /root) are linked, or copied, into {@code base}.
     */
    private static String classPathForNobody(Path base) throws Exception {
        Path cp = Files.createDirectory(base.resolve("cp"));
        Files.setPosixFilePermissions(cp, PosixFilePermissions.fromString("rwxr-xr-x"));
        java.util.List<String> entries = new java.util.ArrayList<>();
        int i = 0;
        String all = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (String e : all.split(java.io.File.pathSeparator)) {
            Path p = Path.of(e);
            if (Files.isDirectory(p) || !Files.exists(p)) {
                entries.add(e);
                continue;
            }
            Path link = cp.resolve((i++) + "-" + p.getFileName());
            try {
                Files.createLink(link, p);
            } catch (java.io.IOException | UnsupportedOperationException ex) {
                Files.copy(p, link);
                Files.setPosixFilePermissions(link, PosixFilePermissions.fromString("rw-r--r--"));
            }
            entries.add(link.toString());
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    @Test
    void aDirectoryNobodyMayUseIsAPermissionProblemNotAMissingOne() throws Exception {
        io.pistore.testing.AsNobody.assumeAvailable();
        Path base = io.pistore.testing.AsNobody.traversableDir("pistore-perm-");
        try {
            Path d = base.resolve("data");
            assertEquals(0, run("volume", "create", "--data", d.toString(), "v1", "--size", "64k").code());
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String cp = classPathForNobody(base);
            java.util.function.Function<String, io.pistore.testing.AsNobody.Run> list = dir -> {
                try {
                    return io.pistore.testing.AsNobody.run(java, "-XX:TieredStopAtLevel=1", "-cp", cp,
                            Main.class.getName(), "volume", "list", "--data", dir);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            };
            io.pistore.testing.AsNobody.Run r = list.apply(d.toString());
            assertEquals(2, r.code(), r.output());
            assertEquals("pistore volume list: --data " + d + ": permission denied (mode 0700, owner "
                    + System.getProperty("user.name") + "; pistore runs as nobody)\n", r.output());

            r = list.apply(d.resolve("inner").toString());
            assertEquals(2, r.code(), r.output());
            assertEquals("pistore volume list: --data " + d.resolve("inner") + ": permission denied (" + d
                    + " is mode 0700, owner " + System.getProperty("user.name") + "; pistore runs as nobody)\n",
                    r.output());

            // a directory nobody may list, whose files are private: the lock file is what stops it
            Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
            r = list.apply(d.toString());
            assertEquals(2, r.code(), r.output());
            assertTrue(r.output().endsWith("pistore volume list: " + d.resolve(".lock") + ": permission denied (mode "
                    + "0600, owner " + System.getProperty("user.name") + "; pistore runs as nobody)\n"), r.output());
        } finally {
            io.pistore.testkit.TestFiles.deleteTree(base);
        }
    }
}
