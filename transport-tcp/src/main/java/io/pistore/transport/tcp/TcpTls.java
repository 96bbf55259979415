package io.pistore.transport.tcp;

import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import java.nio.file.Path;

/**
 * The TLS of a tcp transport (docs/PROTOCOL-TCP.md, "TLS"): every connection runs TLS 1.3 from its
 * first byte, before HELLO; frames, digests and PI travel inside it unchanged. A target presents
 * its certificate and, with client verification, accepts only hosts whose certificate chains to
 * the CA bundle; a host checks the target's certificate against the CA bundle and the address it
 * dialled, and presents its own certificate when it has one.
 *
 * @param server the context of listeners (null: this transport cannot listen with TLS)
 * @param client the context of host connections
 */
public record TcpTls(TlsContext server, TlsContext client) {
    /**
     * Loads the files now (a bad one is a {@link io.pistore.security.tls.TlsFileException} with a
     * one-line message): {@code cert} and {@code key} (may be null) are this side's certificate, the
     * target's, or the host's for mutual TLS; {@code ca} is the bundle peers' certificates must chain
     * to (null: the JDK's trust store for a host, no client certificates for a target).
     */
    public static TcpTls load(Path cert, Path key, Path ca, boolean verifyClient) {
        return load(cert, key, ca, verifyClient, TlsEngine.AUTO);
    }

    /**
     * {@link #load(Path, Path, Path, boolean)} on the given engine (an unavailable openssl is a
     * {@link io.pistore.security.tls.TlsFileException} too).
     */
    public static TcpTls load(Path cert, Path key, Path ca, boolean verifyClient, TlsEngine engine) {
        TlsContext s = cert != null || key != null ? TlsContext.server(cert, key, ca, verifyClient, engine) : null;
        if (s == null && verifyClient) {
            throw new io.pistore.security.tls.TlsFileException("tcp.tlsVerifyClient needs tcp.tlsCert and tcp.tlsKey");
        }
        TlsContext c = TlsContext.client(ca, cert, key, engine);
        return new TcpTls(s, c);
    }

    /** The engine that runs the records, for log lines: {@code openssl (BoringSSL)} or {@code jdk}. */
    public String engine() {
        return client.engine();
    }

    @Override
    public String toString() {
        return server != null ? server.toString() : client.toString();
    }
}
