package io.pistore.it.kit;

import io.pistore.spi.TransportOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * The compatibility kit on tcp with TLS 1.3 and a pre-shared key on every queue ({@code tcp.tlsPsk})
 * instead of certificates, set only through transport settings, as a user sets them: target and
 * host read one key file.
 */
class TcpTlsPskKitTest extends TcpTlsKit {
    @Override
    protected String engine() {
        return "psk"; // not a tcp.tlsEngine: pre-shared keys run on Bouncy Castle's TLS
    }

    @Override
    protected TransportOptions transportOptions() {
        Path keys = dir.resolve("kit.psk");
        try {
            if (!Files.exists(keys)) {
                Files.write(keys, List.of("kit-host:" + java.util.HexFormat.of().formatHex(
                        new java.security.SecureRandom().generateSeed(32))));
                Files.setPosixFilePermissions(keys, PosixFilePermissions.fromString("rw-------"));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return TransportOptions.NONE.with("tcp.tls", "true").with("tcp.tlsPsk", keys.toString());
    }
}
