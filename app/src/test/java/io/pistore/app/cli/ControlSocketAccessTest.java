package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.app.cli.EngineCommandsTest.Result;
import io.pistore.engine.volume.PrivateFiles;
import io.pistore.server.control.ControlSocket;
import io.pistore.testing.AsNobody;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control socket of a data directory is its owner's: the socket file is 0600, the kernel tells
 * the server who connects ({@code SO_PEERCRED}) and only the server's own user and root are served;
 * every accepted request is logged with its caller.
 */
class ControlSocketAccessTest {
    /** A client of the socket as another user: connects, sends one request line, prints the answer. */
    private static final String CLIENT = "import socket,sys\n"
            + "s=socket.socket(socket.AF_UNIX)\n"
            + "s.connect(sys.argv[1])\n"
            + "s.sendall(b'list\\n')\n"
            + "print(s.makefile().read(), end='')\n";

    @TempDir
    Path tmp;

    @Test
    void theSocketIsPrivateAndEachRequestIsLoggedWithItsCaller() throws Exception {
        Path data = tmp.resolve("data");
        assertEquals(0, EngineCommandsTest.run("volume", "create", "--data", data.toString(), "v1", "--size", "64k")
                .code());
        try (ServeThread serve = new ServeThread("serve", "--data", data.toString(), "--transport", "local",
                "--listen", "control-access-test")) {
            serve.awaitOutput(o -> o.contains("v1 "));
            assertEquals("0600", PrivateFiles.mode(data.resolve(ControlSocket.FILE)));
            Result r = EngineCommandsTest.run("volume", "create", "--data", data.toString(), "v2", "--size", "64k");
            assertEquals(0, r.code(), r.err());
            String me = System.getProperty("user.name");
            serve.awaitOutput(o -> o.contains("control: created v2"));
            assertTrue(serve.out().contains("control: created v2: 16 blocks") && serve.out().contains(" (user " + me + ")"),
                    serve.out());
            assertEquals(0, EngineCommandsTest.run("volume", "list", "--data", data.toString()).code());
            serve.awaitOutput(o -> o.contains("control: list (user " + me + ")"));
            assertTrue(serve.out().contains("control: list (user " + me + ")"), serve.out());
            assertEquals(0, serve.stop(), serve.err());
        }
    }

    @Test
    void nobodyCannotConnectAndIsRefusedWhenTheFileWouldLetIt() throws Exception {
        AsNobody.assumeAvailable();
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")),
                "skipped: /usr/bin/python3 (the client run as nobody) is not installed");
        Path base = AsNobody.traversableDir("pistore-perm-");
        try {
            Path data = base.resolve("data");
            assertEquals(0, EngineCommandsTest.run("volume", "create", "--data", data.toString(), "v1", "--size",
                    "64k").code());
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwx--x--x")); // let nobody pass
            Path socket = data.resolve(ControlSocket.FILE);
            try (ServeThread serve = new ServeThread("serve", "--data", data.toString(), "--transport", "local",
                    "--listen", "control-nobody-test")) {
                serve.awaitOutput(o -> o.contains("v1 "));
                AsNobody.Run denied = AsNobody.run("/usr/bin/python3", "-c", CLIENT, socket.toString());
                assertFalse(denied.ok(), denied.output());
                assertTrue(denied.output().contains("PermissionError"), denied.output());

                // with the file opened to everyone, the server itself still tells nobody no
                Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
                AsNobody.Run refused = AsNobody.run("/usr/bin/python3", "-c", CLIENT, socket.toString());
                assertTrue(refused.ok(), refused.output());
                String me = System.getProperty("user.name");
                String who = me.equals("root") ? "root" : me + " and root";
                assertEquals("error\tusage\tthe control socket of " + data.toAbsolutePath() + " serves only " + who
                        + ", not nobody\n", refused.output());
                serve.awaitOutput(o -> o.contains("control: refused user nobody"));
                assertTrue(serve.out().contains("control: refused user nobody: only " + who
                        + " may change this server's volumes"), serve.out());
                assertEquals(0, serve.stop(), serve.err());
            }
        } finally {
            io.pistore.testkit.TestFiles.deleteTree(base);
        }
    }
}
