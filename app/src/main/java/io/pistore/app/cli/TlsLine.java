package io.pistore.app.cli;

import io.pistore.security.tls.NativeTls;
import io.pistore.security.tls.TlsEngine;
import io.pistore.spi.TransportOptions;

/**
 * The start-up line that says which engine runs the tcp transport's TLS records ({@code tls:
 * TLSv1.3 engine=openssl (BoringSSL)}), resolved as the transport resolves {@code tcp.tlsEngine},
 * so that a benchmark or a server log shows which one ran.
 */
public final class TlsLine {
    private TlsLine() {
    }

    /** The line for {@code settings}, or null when the tcp transport runs no TLS (or its engine setting is bad). */
    public static String tcp(TransportOptions settings) {
        if (!"true".equalsIgnoreCase(settings.asMap().get("tcp.tls"))) {
            return null;
        }
        if (settings.asMap().containsKey("tcp.tlsPsk")) {
            return "tls: TLSv1.3 pre-shared keys (Bouncy Castle)";
        }
        try {
            TlsEngine e = TlsEngine.parse(settings.asMap().getOrDefault("tcp.tlsEngine", "auto"))
                    .resolve(NativeTls.NETTY);
            return "tls: TLSv1.3 engine=" + e.describe(NativeTls.NETTY);
        } catch (IllegalArgumentException e) {
            return null; // the transport itself says what is wrong
        }
    }
}
