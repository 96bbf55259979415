package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One owner per data directory, across processes: while {@code pistore serve} runs on a directory
 * (a process of its own), every other {@code pistore} process that would open it — a second serve,
 * {@code bench --data} — is refused with exit 2 and one line naming the server's pid, and changes
 * nothing; {@code volume} commands and {@code scrub} do not open it but ask the server, which keeps a
 * volume in use from being deleted and scrubs a volume as it serves it (a block gone bad at rest
 * found with exit 1). Once the server is gone, even by {@code kill -9}, the directory opens again.
 */
class OneOwnerPerDataDirTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    record Ran(int code, List<String> lines) {
    }

    @BeforeEach
    void createVolume() {
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", dir.toString(),
                "v", "--size", "1MiB", "--format", "4096+8"), o.toString());
    }

    PistoreProcess serve() throws Exception {
        return PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp", "--listen", "127.0.0.1:0");
    }

    /** A pistore command in a process of its own, to its end. */
    static Ran cli(String... args) throws Exception {
        PistoreProcess p = PistoreProcess.start(List.of(), args);
        int code = p.await(120);
        return new Ran(code, List.copyOf(p.lines));
    }

    String owner(PistoreProcess server) {
        return dir + " is in use by pid " + server.process.pid() + " (pistore serve); ";
    }

    @Test
    void aSecondServeIsRefusedNamingTheFirstsPid() throws Exception {
        try (PistoreProcess first = serve()) {
            first.awaitListening();
            Ran second = cli("serve", "--data", dir.toString(), "--transport", "tcp", "--listen", "127.0.0.1:0");
            assertEquals(2, second.code(), second.lines().toString());
            assertTrue(second.lines().contains("pistore serve: " + owner(first)
                    + "stop it, or export its volumes with --nbd --target HOST:PORT"), second.lines().toString());
            assertFalse(second.lines().stream().anyMatch(l -> l.contains("volume(s)")), second.lines().toString());
            assertTrue(first.process.isAlive(), "the first serve runs on");
        }
    }

    @Test
    void volumeCommandsAndScrubFromAnotherProcessGoThroughTheServer() throws Exception {
        byte[] block = new byte[BS];
        new Random(0x10CC).nextBytes(block);
        try (PistoreProcess server = serve();
             BlockTransport t = Transports.find("tcp").create();
             HostConnection c = t.connect(server.awaitListening(), new ConnectOptions(1, 8))) {
            BlockDevice dev = BlockDevice.open(c, "v");
            assertTrue(BlockDevice.await(() -> dev.write(7, ScatterList.wrap(block))).isSuccess());
            Ran scrub = cli("scrub", "--data", dir.toString(), "v");
            assertEquals(0, scrub.code(), scrub.lines().toString());
            assertTrue(scrub.lines().stream().anyMatch(l -> l.startsWith("checked 256 blocks (") && l.endsWith(
                    ": 0 bad, 255 unwritten")), "scrubbed by the server, block 7 written: " + scrub.lines());
            // volume commands go to the owner, through its control socket: one owner still
            // a writer keeps the volume in use while the delete's JVM starts, however slow that is here
            java.util.concurrent.atomic.AtomicBoolean deleting = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicReference<String> writeFailed = new java.util.concurrent.atomic.AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    while (deleting.get() && writeFailed.get() == null) {
                        Completion w = BlockDevice.await(() -> dev.write(7, ScatterList.wrap(block)));
                        if (!w.isSuccess()) {
                            writeFailed.set(w.toString());
                        }
                    }
                } catch (Exception e) {
                    writeFailed.set(e.toString());
                }
            });
            writer.start();
            Ran delete;
            try {
                delete = cli("volume", "delete", "--data", dir.toString(), "v");
            } finally {
                deleting.set(false);
                writer.join();
            }
            assertEquals(null, writeFailed.get(), "writes during the refused delete");
            assertEquals(2, delete.code(), delete.lines().toString());
            assertTrue(delete.lines().stream().anyMatch(l -> l.startsWith("pistore volume delete: volume v is in use")),
                    "a volume being written is in use: " + delete.lines());
            assertTrue(Files.exists(dir.resolve("v.volume")) && Files.exists(dir.resolve("v.data")),
                    "the refused delete removed nothing");
            Ran create = cli("volume", "create", "--data", dir.toString(), "w", "--size", "1MiB");
            assertEquals(0, create.code(), create.lines().toString());
            assertTrue(create.lines().get(0).endsWith(", through the running server"), create.lines().toString());
            Ran list = cli("volume", "list", "--data", dir.toString());
            assertEquals(0, list.code(), list.lines().toString());
            assertTrue(list.lines().stream().anyMatch(l -> l.startsWith("w ")), list.lines().toString());
            ByteBuffer back = ByteBuffer.allocate(BS);
            Completion read = BlockDevice.await(() -> dev.read(7, ScatterList.of(back)));
            assertTrue(read.isSuccess(), read.toString());
            assertArrayEquals(block, back.array(), "the served volume still holds its write");
            assertTrue(BlockDevice.await(dev::flush).isSuccess());
        }
        Ran scrub = cli("scrub", "--data", dir.toString(), "v");
        assertEquals(0, scrub.code(), "after serve stopped: " + scrub.lines());
        // a block gone bad at rest (its home data changed under its PI) is found by the serving server
        try (java.nio.channels.FileChannel f = java.nio.channels.FileChannel.open(dir.resolve("v.data"),
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            f.read(b, 7L * BS + 100);
            b.put(0, (byte) ~b.get(0)).rewind();
            f.write(b, 7L * BS + 100);
        }
        try (PistoreProcess server = serve()) {
            server.awaitListening();
            Ran bad = cli("scrub", "--data", dir.toString(), "v");
            assertEquals(1, bad.code(), bad.lines().toString());
            assertTrue(bad.lines().stream().anyMatch(l -> l.startsWith("lba=7 error=guard ")), bad.lines().toString());
            assertTrue(bad.lines().stream().anyMatch(l -> l.endsWith(": 1 bad, 255 unwritten")), bad.lines().toString());
        }
        Ran delete = cli("volume", "delete", "--data", dir.toString(), "v");
        assertEquals(0, delete.code(), "after serve stopped: " + delete.lines());
    }

    @Test
    void afterKillNineOfTheServerTheDirectoryOpensAgain() throws Exception {
        PistoreProcess killed = serve();
        killed.awaitListening();
        killed.kill();
        assertTrue(Files.readString(dir.resolve(".lock")).contains("pid=" + killed.process.pid()),
                "the lock file stays, naming the dead server; only the kernel's lock counts");
        Ran list = cli("volume", "list", "--data", dir.toString());
        assertEquals(0, list.code(), list.lines().toString());
        assertTrue(list.lines().stream().anyMatch(l -> l.startsWith("v ")), list.lines().toString());
        Ran scrub = cli("scrub", "--data", dir.toString(), "v");
        assertEquals(0, scrub.code(), scrub.lines().toString());
        try (PistoreProcess next = serve()) {
            next.awaitListening();
            Ran refused = cli("bench", "--data", dir.toString(), "--volume", "v", "--seconds", "1");
            assertEquals(2, refused.code(), refused.lines().toString());
            assertTrue(refused.lines().contains("pistore bench: " + owner(next)
                    + "stop it, or bench its volumes with --target HOST:PORT"),
                    "the refusal names the new server, not the dead one: " + refused.lines());
        }
    }
}
