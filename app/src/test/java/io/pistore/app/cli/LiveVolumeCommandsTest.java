package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.EngineCommandsTest.Result;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.server.control.ServedVolumeUse;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pistore volume create | list | resize | delete} while {@code pistore serve} owns the data
 * directory: the commands go through the server's control socket and change the volumes it serves,
 * with no restart.
 */
class LiveVolumeCommandsTest {
    @TempDir
    Path dir;

    private String data() {
        return dir.resolve("data").toString();
    }

    private static Result run(String... args) {
        return EngineCommandsTest.run(args);
    }

    private static HostConnection connect(String listen) throws Exception {
        BlockTransport t = Transports.find("local").create();
        return t.connect(listen, new ConnectOptions(1, 8));
    }

    private static VolumeInfo info(HostConnection c, String name) {
        return c.volumes().stream().filter(v -> v.name().equals(name)).findFirst().orElse(null);
    }

    @Test
    void createResizeAndDeleteReachTheRunningServer() throws Exception {
        assertEquals(0, run("volume", "create", "--data", data(), "first", "--size", "1m").code());
        try (ServeThread serve = new ServeThread("serve", "--data", data(), "--transport", "local", "--listen",
                "live-test")) {
            serve.awaitOutput(o -> o.contains("first "));
            assertTrue(serve.out().contains("volumes change live: pistore volume create|resize|delete --data " + data()),
                    serve.out() + " / " + serve.err());
            assertTrue(Files.exists(Path.of(data(), ".control")), "the control socket is in the data directory");

            Result created = run("volume", "create", "--data", data(), "late", "--size", "64k", "--format", "512+8");
            assertEquals(0, created.code(), created.err());
            assertEquals("created late: 128 blocks, " + io.pistore.integrity.BlockFormat.of(512, 8) + ", in " + data()
                    + ", through the running server", created.out().strip());
            Result list = run("volume", "list", "--data", data());
            assertEquals(0, list.code(), list.err());
            assertTrue(list.out().contains("first ") && list.out().contains("late "), list.out());

            byte[] block = new byte[512];
            new Random(7).nextBytes(block);
            try (HostConnection c = connect("live-test")) {
                assertEquals(128, info(c, "late").blockCount(), "a volume created live is served at once");
                BlockDevice dev = BlockDevice.open(c, "late");
                assertTrue(BlockDevice.await(() -> dev.write(127, ScatterList.wrap(block))).isSuccess());

                Result grown = run("volume", "resize", "--data", data(), "late", "--size", "128k");
                assertEquals(0, grown.code(), grown.err());
                assertEquals("resized late: 128 -> 256 blocks", grown.out().strip());
                Result shrink = run("volume", "resize", "--data", data(), "late", "--size", "32k");
                assertEquals(2, shrink.code());
                assertTrue(shrink.err().contains("shrinking to 64 would drop data"), shrink.err());
                Result odd = run("volume", "resize", "--data", data(), "late", "--size", "1000");
                assertEquals(2, odd.code());
                assertTrue(odd.err().contains("not a positive multiple of the 512-byte block"), odd.err());

                // the block written before the resize is intact, and the new end is writable
                ByteBuffer back = ByteBuffer.allocate(512);
                assertTrue(BlockDevice.await(() -> dev.read(127, ScatterList.of(back))).isSuccess());
                assertArrayEquals(block, back.array());
                assertTrue(BlockDevice.await(() -> dev.write(255, ScatterList.wrap(block))).isSuccess(),
                        "the grown blocks are served at once");
                try (HostConnection again = connect("live-test")) {
                    assertEquals(256, info(again, "late").blockCount(), "a new connection sees the new size");
                }

                // it was written just now: in use, so only --force deletes it
                assertTrue(BlockDevice.await(() -> dev.write(255, ScatterList.wrap(block))).isSuccess());
                Result refused = run("volume", "delete", "--data", data(), "late");
                assertEquals(2, refused.code());
                assertEquals("pistore volume delete: volume late is in use (requests within the last "
                        + ServedVolumeUse.QUIET_SECONDS + " s); --force ends its connections and deletes it",
                        refused.err().strip());
                assertTrue(Files.exists(Path.of(data(), "late.volume")), "the refused delete removed nothing");
                Result forced = run("volume", "delete", "--data", data(), "late", "--force");
                assertEquals(0, forced.code(), forced.err());
                assertEquals("deleted late", forced.out().strip());
                Completion gone = dev.read(0, ScatterList.of(ByteBuffer.allocate(512))).get();
                assertEquals(Status.NO_SUCH_VOLUME, gone.status(), gone.toString());
            }
            assertFalse(Files.exists(Path.of(data(), "late.data")));

            // a volume nobody used goes without --force
            Result idle = run("volume", "delete", "--data", data(), "first");
            assertEquals(0, idle.code(), idle.err());
            Result missing = run("volume", "delete", "--data", data(), "nosuch");
            assertEquals(2, missing.code());
            assertEquals("pistore volume delete: no volume named nosuch", missing.err().strip());
            assertTrue(serve.out().contains("control: created late"), serve.out());
            assertTrue(serve.out().contains("control: resized late: 128 -> 256 blocks"), serve.out());
            assertEquals(0, serve.stop());
        }
        assertFalse(Files.exists(Path.of(data(), ".control")), "the socket goes with the server");
        Result after = run("volume", "list", "--data", data());
        assertEquals(0, after.code(), after.err());
        assertFalse(after.out().contains("late") || after.out().contains("first"), after.out());
    }

    @Test
    void aDataDirTooLongForAUnixSocketSaysSoAndWhatToDo() throws Exception {
        Path deep = dir;
        while (deep.resolve(".control").toAbsolutePath().toString().length() <= 107) {
            deep = deep.resolve("a-directory-with-a-long-name");
        }
        String data = deep.toString();
        assertEquals(0, run("volume", "create", "--data", data, "first", "--size", "64k").code());
        try (ServeThread serve = new ServeThread("serve", "--data", data, "--transport", "local", "--listen",
                "live-long-test")) {
            serve.awaitOutput(o -> o.contains("live volume changes") || o.contains("volumes change live"));
            assertTrue(serve.out().contains("no live volume changes: the control socket " + data + "/.control would be "),
                    serve.out() + " / " + serve.err());
            assertTrue(serve.out().contains("longer than the 107 a Unix socket path may have: give serve and the volume "
                    + "commands a shorter --data path (a symlink to the directory will do)"), serve.out());
            Result refused = run("volume", "create", "--data", data, "late", "--size", "64k");
            assertEquals(2, refused.code(), refused.out() + refused.err());
            assertTrue(refused.err().contains("no live volume changes there: the control socket " + data + "/.control"
                    + " would be "), refused.err());
            assertTrue(refused.err().strip().endsWith("(a symlink to the directory will do); or stop it first"),
                    refused.err());
            assertEquals(0, serve.stop());
        }
    }
}
