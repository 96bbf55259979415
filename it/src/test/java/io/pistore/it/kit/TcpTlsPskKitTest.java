package io.pistore.it.kit;

import io.pistore.spi.TransportOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The compatibility kit on tcp with TLS 1.3 and a pre-shared key on every queue ({@code tcp.tlsPsk}),
 * set only through transport settings, as a user sets them: target and host read one key file.
 */
class TcpTlsPskKitTest extends TransportCompatibilityKit {
    private static Path dir;

    @BeforeAll
    static void keyFile() throws Exception {
        dir = Files.createTempDirectory("pistore-psk-kit");
        Files.write(dir.resolve("kit.psk"), List.of("kit-host:" + java.util.HexFormat.of().formatHex(
                new java.security.SecureRandom().generateSeed(32))));
        Files.setPosixFilePermissions(dir.resolve("kit.psk"), PosixFilePermissions.fromString("rw-------"));
    }

    @AfterAll
    static void removeKeyFile() throws Exception {
        if (dir != null) {
            io.pistore.testkit.TestFiles.deleteTree(dir);
        }
    }

    @Override
    protected String transportName() {
        return "tcp";
    }

    @Override
    protected TransportOptions transportOptions() {
        return TransportOptions.NONE.with("tcp.tls", "true").with("tcp.tlsPsk", dir.resolve("kit.psk").toString());
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
