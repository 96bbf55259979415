package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Volumes of a running {@code pistore serve --nbd} (a process of its own) created, grown and deleted
 * by {@code pistore volume} from other processes: NBD clients see a new volume and a new size when
 * they connect, a volume with a client is deleted only with {@code --force}, which ends that
 * client's connection first, and the real client {@code nbdinfo} agrees where it is installed.
 */
@Timeout(180)
class LiveVolumesOverNbdTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    record Ran(int code, List<String> lines) {
    }

    static Ran cli(String... args) throws Exception {
        PistoreProcess p = PistoreProcess.start(List.of(), args);
        int code = p.await(120);
        return new Ran(code, List.copyOf(p.lines));
    }

    @Test
    void volumesChangeUnderARunningNbdServer() throws Exception {
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", dir.toString(),
                "v", "--size", "1MiB", "--format", "4096+8"), o.toString());
        byte[] block = new byte[BS];
        new Random(0x11FE).nextBytes(block);
        try (PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--nbd",
                "127.0.0.1:0")) {
            String nbd = server.awaitNbdListening();
            try (NbdCrashHost first = new NbdCrashHost(nbd, "v")) {
                assertEquals(1L << 20, first.size());
                assertEquals(CrashHost.Ack.DONE, first.write(3, block, true));

                Ran grown = cli("volume", "resize", "--data", dir.toString(), "v", "--size", "3MiB");
                assertEquals(0, grown.code(), grown.lines().toString());
                assertTrue(grown.lines().contains("resized v: 256 -> 768 blocks"), grown.lines().toString());
                try (NbdCrashHost second = new NbdCrashHost(nbd, "v")) {
                    assertEquals(3L << 20, second.size(), "a new NBD connection sees the new size");
                    assertArrayEquals(block, second.read(3).data(), "the block written before the resize");
                    assertEquals(CrashHost.Ack.DONE, second.write(767, block, true), "the new end is writable");
                }
                nbdinfoSize(nbd, "v", 3L << 20);

                Ran created = cli("volume", "create", "--data", dir.toString(), "w", "--size", "2MiB");
                assertEquals(0, created.code(), created.lines().toString());
                try (NbdCrashHost w = new NbdCrashHost(nbd, "w")) {
                    assertEquals(2L << 20, w.size(), "a volume created live is exported at once");
                }

                Ran refused = cli("volume", "delete", "--data", dir.toString(), "v");
                assertEquals(2, refused.code(), refused.lines().toString());
                assertTrue(refused.lines().stream().anyMatch(l -> l.startsWith("pistore volume delete: volume v is in use"
                        + " (1 NBD client(s)") && l.endsWith("--force ends its connections and deletes it")),
                        refused.lines().toString());
                assertTrue(Files.exists(dir.resolve("v.data")), "the refused delete removed nothing");
                assertArrayEquals(block, first.read(3).data(), "the client carries on after the refusal");

                Ran forced = cli("volume", "delete", "--data", dir.toString(), "v", "--force");
                assertEquals(0, forced.code(), forced.lines().toString());
                assertEquals(List.of("ended 1 client connection(s) (NBD, iSCSI) to v", "deleted v"), forced.lines());
                assertThrows(IOException.class, () -> first.read(3), "the forced delete ended the connection");
            }
            assertFalse(Files.exists(dir.resolve("v.volume")) || Files.exists(dir.resolve("v.data")));
            try {
                Eventually.await("the server's line on the ended connection", Duration.ofSeconds(10),
                        () -> server.output().contains("connection ended: export v is being deleted"));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + server.output(), e);
            }
            assertTrue(server.process.isAlive(), "the server runs on");
        }
        Ran list = cli("volume", "list", "--data", dir.toString());
        assertEquals(0, list.code(), list.lines().toString());
        assertTrue(list.lines().stream().anyMatch(l -> l.startsWith("w ")), list.lines().toString());
        assertFalse(list.lines().stream().anyMatch(l -> l.startsWith("v ")), list.lines().toString());
    }

    /** What {@code nbdinfo --size} says of the export, where nbdinfo is installed. */
    private static void nbdinfoSize(String nbd, String export, long want) throws Exception {
        if (!Files.isExecutable(Path.of("/usr/bin/nbdinfo"))) {
            return; // the Java client above checked the size; .ci/run installs libnbd-bin
        }
        Process p = new ProcessBuilder("nbdinfo", "--size", "nbd://" + nbd + "/" + export).redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertEquals(Long.toString(want), out);
    }
}
