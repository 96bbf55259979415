package io.pistore.transport.tcp;

import io.pistore.security.tls.PskKeys;
import io.pistore.security.tls.PskTlsChannel;
import io.pistore.security.tls.TlsChannel;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import io.pistore.security.tls.TlsFileException;
import io.pistore.security.tls.TlsStream;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * The TLS of a tcp transport (docs/PROTOCOL-TCP.md, "TLS"): every connection runs TLS 1.3 from its
 * first byte, before HELLO; frames, digests and PI travel inside it unchanged. With certificates a
 * target presents its certificate and, with client verification, accepts only hosts whose
 * certificate chains to the CA bundle; a host checks the target's certificate against the CA bundle
 * and the address it dialled, and presents its own certificate when it has one. With pre-shared keys
 * (NVMe/TCP's way, {@link #psk}) each side proves it holds the key of one identity, which names the
 * host to the target's access rules; nothing else is trusted.
 *
 * @param server the certificate context of listeners (null: none, or pre-shared keys)
 * @param client the certificate context of host connections (null with pre-shared keys)
 * @param pskKeys the pre-shared keys a target accepts and a host offers one of, or null
 * @param pskIdentity the identity a host offers (one of {@code pskKeys}'s), or null
 */
public record TcpTls(TlsContext server, TlsContext client, PskKeys pskKeys, String pskIdentity) {
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
        return new TcpTls(s, c, null, null);
    }

    /**
     * TLS 1.3 with pre-shared keys from {@code keyFile} ({@code IDENTITY:HEXKEY} lines, as GnuTLS's
     * {@code psktool} writes them; open to no one but its owner): a target accepts every identity of
     * the file; a host offers {@code identity}, which may be null when the file holds one.
     */
    public static TcpTls psk(Path keyFile, String identity) {
        PskKeys keys = PskKeys.read(keyFile);
        if (identity != null && keys.key(identity) == null) {
            throw new TlsFileException("PSK key file " + keyFile + " has no identity '" + identity + "'");
        }
        String offered = identity != null ? identity : keys.identities().size() == 1
                ? keys.identities().iterator().next() : null;
        return new TcpTls(null, null, keys, offered);
    }

    /** Whether sessions use pre-shared keys rather than certificates. */
    public boolean isPsk() {
        return pskKeys != null;
    }

    /** Whether a listener can run TLS: it has a certificate, or pre-shared keys. */
    public boolean canListen() {
        return server != null || isPsk();
    }

    /** Whether every host proves who it is (a verified certificate, or a pre-shared key), as access rules need. */
    public boolean identifiesHosts() {
        return isPsk() || server != null && server.requiresClientCertificate();
    }

    /** The server side of a session on an accepted connection. */
    public TlsStream serverStream(SocketChannel ch) throws javax.net.ssl.SSLException {
        return isPsk() ? new PskTlsChannel(ch, pskKeys) : new TlsChannel(ch, server.serverEngine());
    }

    /**
     * The client side of a session on a connection to {@code host}:{@code port}; a host whose key
     * file holds several identities and was given none cannot offer one (an {@link javax.net.ssl.SSLException} that says so).
     */
    public TlsStream clientStream(SocketChannel ch, String host, int port) throws javax.net.ssl.SSLException {
        if (!isPsk()) {
            return new TlsChannel(ch, client.clientEngine(host, port));
        }
        if (pskIdentity == null) {
            throw new javax.net.ssl.SSLException("the PSK key file holds " + pskKeys.identities().size()
                    + " identities: tcp.tlsPskIdentity names the one this host offers");
        }
        return PskTlsChannel.client(ch, pskIdentity, pskKeys.key(pskIdentity));
    }

    /** The engine that runs the records, for log lines: {@code openssl (BoringSSL)}, {@code jdk}, or {@code psk}. */
    public String engine() {
        return isPsk() ? "psk" : client.engine();
    }

    @Override
    public String toString() {
        return isPsk() ? "pre-shared keys " + pskKeys + (pskIdentity == null ? "" : ", offering '" + pskIdentity + "'")
                : server != null ? server.toString() : client.toString();
    }
}
