package io.pistore.security.tls;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSslCachingX509KeyManagerFactory;
import io.netty.handler.ssl.ReferenceCountedOpenSslEngine;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Date;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS 1.3 with X.509 certificates from PEM files, loaded and checked once, when a server or client
 * is configured: a file that is missing, unreadable, not PEM, expired, or a key that does not match
 * its certificate is a {@link TlsFileException} with a one-line message then, not a failed
 * handshake at the first connection. Makes the {@link SSLEngine}s of the NBD frontend and the tcp
 * transport.
 *
 * <p>A server presents its certificate chain and, with {@code requireClientCertificate}, accepts
 * only clients whose certificate chains to the CA bundle (mutual TLS). A client trusts the CA bundle
 * (the JDK's default trust store when none is given), checks that the server's certificate names the
 * host it dialled, and presents its own certificate when it has one.
 *
 * <p>The engines come from the {@link TlsEngine} chosen when the context is made: Netty's OpenSSL
 * engine over BoringSSL (the default where its native library loads) or the JDK's. Both take the same
 * key, certificates and trust managers, so certificate checks, mutual TLS and the peer's certificate
 * in the session are the same; {@link #clientSocket} is always the JDK's (blocking tools and tests).
 */
public final class TlsContext {
    /** The only protocol offered: TLS 1.3 (AES-GCM or ChaCha20-Poly1305, forward secret). */
    public static final String PROTOCOL = "TLSv1.3";
    /**
     * The TLS 1.3 suites in the server's order of preference: AES-128-GCM first, the fastest with the
     * CPU's AES instructions (the JDK's own order puts AES-256 first), then the others for peers
     * that want them.
     */
    static final String[] SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"};

    private final SSLContext context;
    /** The native engine's context; null with the JDK's engine. */
    private final SslContext nativeContext;
    private final boolean server;
    private final boolean requireClientCertificate;
    private final String description;
    private final String engine;

    private TlsContext(SSLContext context, SslContext nativeContext, boolean server, boolean requireClientCertificate,
                       String description, String engine) {
        this.context = context;
        this.nativeContext = nativeContext;
        this.server = server;
        this.requireClientCertificate = requireClientCertificate;
        this.description = description;
        this.engine = engine;
    }

    /**
     * A server's context: its certificate chain and key (PEM), the CA bundle that client
     * certificates must chain to (may be null unless {@code requireClientCertificate}).
     */
    public static TlsContext server(Path certificate, Path key, Path ca, boolean requireClientCertificate) {
        return server(certificate, key, ca, requireClientCertificate, TlsEngine.AUTO);
    }

    /** {@link #server(Path, Path, Path, boolean)} on the given engine. */
    public static TlsContext server(Path certificate, Path key, Path ca, boolean requireClientCertificate,
                                    TlsEngine engine) {
        return server(certificate, key, ca, requireClientCertificate, engine, NativeTls.NETTY);
    }

    static TlsContext server(Path certificate, Path key, Path ca, boolean requireClientCertificate,
                             TlsEngine engine, NativeTls lib) {
        if (certificate == null || key == null) {
            throw new TlsFileException("TLS needs a certificate and its private key");
        }
        if (requireClientCertificate && ca == null) {
            throw new TlsFileException("requiring client certificates needs a CA bundle to check them against");
        }
        Date now = new Date();
        List<X509Certificate> chain = PemCertificates.read(certificate, "certificate", now);
        PrivateKey k = PemKeys.read(key);
        KeyPairCheck.check(k, key, chain.get(0), certificate);
        List<X509Certificate> cas = ca == null ? null : PemCertificates.read(ca, "CA bundle", now);
        TlsEngine e = engine.resolve(lib);
        KeyManagerFactory keys = keyManagers(chain, k);
        TrustManagerFactory trust = trustManagers(cas);
        SSLContext c = build(keys, trust);
        SslContext n = null;
        if (e == TlsEngine.OPENSSL) {
            n = buildNative(SslContextBuilder.forServer(new OpenSslCachingX509KeyManagerFactory(keys))
                    .clientAuth(requireClientCertificate ? ClientAuth.REQUIRE : ClientAuth.NONE), trust);
        }
        String d = "certificate " + chain.get(0).getSubjectX500Principal().getName() + " (until "
                + chain.get(0).getNotAfter().toInstant() + ")"
                + (requireClientCertificate ? ", client certificates required" : "");
        return new TlsContext(c, n, true, requireClientCertificate, d, e.describe(lib));
    }

    /**
     * A client's context: the CA bundle the server's certificate must chain to (null: the JDK's
     * default trust store), and optionally its own certificate and key for mutual TLS.
     */
    public static TlsContext client(Path ca, Path certificate, Path key) {
        return client(ca, certificate, key, TlsEngine.AUTO);
    }

    /** {@link #client(Path, Path, Path)} on the given engine. */
    public static TlsContext client(Path ca, Path certificate, Path key, TlsEngine engine) {
        return client(ca, certificate, key, engine, NativeTls.NETTY);
    }

    static TlsContext client(Path ca, Path certificate, Path key, TlsEngine engine, NativeTls lib) {
        if ((certificate == null) != (key == null)) {
            throw new TlsFileException("a client certificate needs its private key, and a key its certificate");
        }
        Date now = new Date();
        List<X509Certificate> chain = null;
        PrivateKey k = null;
        if (certificate != null) {
            chain = PemCertificates.read(certificate, "certificate", now);
            k = PemKeys.read(key);
            KeyPairCheck.check(k, key, chain.get(0), certificate);
        }
        List<X509Certificate> cas = ca == null ? null : PemCertificates.read(ca, "CA bundle", now);
        TlsEngine e = engine.resolve(lib);
        KeyManagerFactory keys = chain == null ? null : keyManagers(chain, k);
        TrustManagerFactory trust = trustManagers(cas);
        SSLContext c = build(keys, trust);
        SslContext n = null;
        if (e == TlsEngine.OPENSSL) {
            SslContextBuilder b = SslContextBuilder.forClient();
            if (keys != null) {
                b.keyManager(new OpenSslCachingX509KeyManagerFactory(keys));
            }
            n = buildNative(b, trust);
        }
        String d = (cas == null ? "default trust store" : "CA " + ca)
                + (chain == null ? "" : ", certificate " + chain.get(0).getSubjectX500Principal().getName());
        return new TlsContext(c, n, false, false, d, e.describe(lib));
    }

    /**
     * The key managers of {@code key} and its {@code chain}, for both engines (the native one converts
     * the key once, through Netty's caching factory, not at each handshake). Held in an in-memory
     * JKS store, which is never written: JKS protects a key with one cheap pass, where PKCS12 runs
     * 10 000 PBKDF2 iterations to put it in and as many again to take it out, CPU every TLS context
     * would pay for nothing.
     */
    private static KeyManagerFactory keyManagers(List<X509Certificate> chain, PrivateKey key) {
        try {
            char[] pw = new char[0];
            KeyStore ks = KeyStore.getInstance("JKS");
            ks.load(null, null);
            ks.setKeyEntry("key", key, pw, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            return kmf;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new TlsFileException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /**
     * The trust managers of {@code cas}, for both engines, or null for the JDK's default trust store
     * (which the native engine then uses too).
     */
    private static TrustManagerFactory trustManagers(List<X509Certificate> cas) {
        if (cas == null) {
            return null;
        }
        try {
            KeyStore ts = KeyStore.getInstance("PKCS12");
            ts.load(null, null);
            for (int i = 0; i < cas.size(); i++) {
                ts.setCertificateEntry("ca" + i, cas.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ts);
            return tmf;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new TlsFileException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /** The JDK engine's context: {@code kmf}'s key (null: none), trusting {@code tmf} (null: the JDK's default trust store). */
    private static SSLContext build(KeyManagerFactory kmf, TrustManagerFactory tmf) {
        try {
            SSLContext c = SSLContext.getInstance(PROTOCOL);
            c.init(kmf == null ? null : kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
            return c;
        } catch (GeneralSecurityException e) {
            throw new TlsFileException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /**
     * The native context: TLS 1.3 only, trusting {@code tmf} (null: the JDK's default trust store).
     * The suites are BoringSSL's own for TLS 1.3 (AES-128-GCM first where the CPU has AES
     * instructions), which it does not let a caller reorder.
     */
    private static SslContext buildNative(SslContextBuilder b, TrustManagerFactory tmf) {
        try {
            b.sslProvider(SslProvider.OPENSSL).protocols(PROTOCOL);
            if (tmf != null) {
                b.trustManager(tmf);
            }
            return b.build();
        } catch (javax.net.ssl.SSLException | RuntimeException e) {
            throw new TlsFileException("cannot set up TLS on the openssl engine: "
                    + TlsEngine.oneLine(e), e);
        }
    }

    /**
     * Whether {@code e} is the native engine, which reads and writes direct buffers without a copy
     * (and copies heap ones through a direct buffer of its own), where the JDK's is faster on heap
     * buffers.
     */
    public static boolean isNative(SSLEngine e) {
        return e instanceof ReferenceCountedOpenSslEngine;
    }

    /** The engine that runs this context's records, for log lines: {@code openssl (BoringSSL)} or {@code jdk}. */
    public String engine() {
        return engine;
    }

    /** A server-side engine for one accepted connection. */
    public SSLEngine serverEngine() {
        if (!server) {
            throw new IllegalStateException("a client context makes client engines");
        }
        if (nativeContext != null) {
            // the builder set the protocol and client authentication; nothing else to choose
            return nativeContext.newEngine(ByteBufAllocator.DEFAULT);
        }
        SSLEngine e = context.createSSLEngine();
        e.setUseClientMode(false);
        e.setSSLParameters(jdkServerParameters());
        return e;
    }

    /** A client-side engine for a connection to {@code host}, whose name the server's certificate must carry. */
    public SSLEngine clientEngine(String host, int port) {
        if (server) {
            throw new IllegalStateException("a server context makes server engines");
        }
        if (nativeContext != null) {
            SSLEngine e = nativeContext.newEngine(ByteBufAllocator.DEFAULT, host, port);
            SSLParameters p = e.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            e.setSSLParameters(p);
            return e;
        }
        SSLEngine e = context.createSSLEngine(host, port);
        e.setUseClientMode(true);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(new String[] {PROTOCOL});
        p.setCipherSuites(supported(e.getSupportedCipherSuites()));
        p.setEndpointIdentificationAlgorithm("HTTPS");
        e.setSSLParameters(p);
        return e;
    }

    /**
     * Starts TLS as a client on a connected blocking socket (for blocking clients, such as tools and
     * tests that speak a protocol's plaintext start first): the handshake runs before this returns.
     */
    public javax.net.ssl.SSLSocket clientSocket(java.net.Socket connected, String host, int port)
            throws java.io.IOException {
        if (server) {
            throw new IllegalStateException("a server context makes server engines");
        }
        javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) context.getSocketFactory()
                .createSocket(connected, host, port, true);
        SSLParameters p = s.getSSLParameters();
        p.setProtocols(new String[] {PROTOCOL});
        p.setEndpointIdentificationAlgorithm("HTTPS");
        s.setSSLParameters(p);
        s.setUseClientMode(true);
        s.startHandshake();
        return s;
    }

    /** {@link #SUITES} that this JDK has, in that order. */
    private static String[] supported(String[] available) {
        java.util.Set<String> have = java.util.Set.of(available);
        return java.util.Arrays.stream(SUITES).filter(have::contains).toArray(String[]::new);
    }

    /** The JDK's context of this server: for a server the JDK runs itself (the metrics endpoint's HTTPS). */
    public SSLContext jdkContext() {
        return context;
    }

    /**
     * What {@link #serverEngine()} sets on a JDK engine: TLS 1.3, the suites in order, and client
     * certificates when they are required.
     */
    public SSLParameters jdkServerParameters() {
        SSLEngine e = context.createSSLEngine();
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(new String[] {PROTOCOL});
        p.setCipherSuites(supported(e.getSupportedCipherSuites()));
        p.setUseCipherSuitesOrder(true);
        p.setNeedClientAuth(requireClientCertificate);
        return p;
    }

    public boolean requiresClientCertificate() {
        return requireClientCertificate;
    }

    /** One line for a start-up banner: whose certificate, until when, whether clients need one, which engine. */
    @Override
    public String toString() {
        return description + ", engine=" + engine;
    }
}
