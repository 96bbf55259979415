package io.pistore.transport.tcp;

import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.TlsEngine;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.util.List;
import java.util.Locale;

/**
 * Settings of the TCP transport. {@link #from} reads them from {@link TransportOptions} (the
 * {@code tcp.*} options below, listed by {@link TcpTransportProvider#options()}); tests also build
 * them directly.
 */
public final class TcpConfig {
    private static final long MAX_MS = Long.MAX_VALUE / 2_000_000;

    public static final TransportOption<Long> IO_THREADS = TransportOption.number("tcp.ioThreads", 0, 0, 256,
            "I/O threads per transport instance, shared by its listeners and connections (0: one per connection"
                    + " as connections open, at most one per CPU)");
    public static final TransportOption<Long> SPIN_MICROS = TransportOption.number("tcp.spinMicros", 50, 0, 1_000_000,
            "how long an I/O thread polls after its last event before it blocks (0: never polls)");
    public static final TransportOption<Long> POLL_MICROS = TransportOption.number("tcp.pollMicros", 200, 0, 1_000_000,
            "how long it polls after its last event while host requests are in flight on it (0: no completion polling)");
    public static final TransportOption<Boolean> SPIN_YIELD = TransportOption.flag("tcp.spinYield", true,
            "yield the CPU between polls (false: Thread.onSpinWait)");
    public static final TransportOption<Boolean> HEADER_DIGEST = TransportOption.flag("tcp.headerDigest", false,
            "ask for CRC-32C header digests (a target grants the digests a host asks for)");
    public static final TransportOption<Boolean> DATA_DIGEST = TransportOption.flag("tcp.dataDigest", false,
            "ask for CRC-32C data digests");
    public static final TransportOption<Long> MAX_TRANSFER = TransportOption.number("tcp.maxTransfer",
            TransportCapabilities.MAX_TRANSFER_BYTES, 4096 + 128, 64 << 20,
            "largest payload (data plus metadata) of one request, in bytes");
    public static final TransportOption<Long> REQUEST_TIMEOUT_MS = TransportOption.number("tcp.requestTimeoutMs",
            30_000, 1, MAX_MS, "a host connection that waits longer for a response is closed and its requests fail");
    public static final TransportOption<Long> CONNECT_TIMEOUT_MS = TransportOption.number("tcp.connectTimeoutMs",
            10_000, 1, MAX_MS, "connecting and saying HELLO; a target closes a connection silent for this long");
    public static final TransportOption<Long> FRAME_TIMEOUT_MS = TransportOption.number("tcp.frameTimeoutMs",
            30_000, 1, MAX_MS, "a peer that stops in the middle of a frame is cut off after this long without a byte"
                    + " (checked once a second)");
    public static final TransportOption<Boolean> RECONNECT = TransportOption.flag("tcp.reconnect", true,
            "a host queue whose connection is lost reconnects in the background, to the next peer of a "
                    + "target list HOST:PORT,HOST:PORT,... (its requests fail meanwhile)");
    public static final TransportOption<Long> RECONNECT_DELAY_MS = TransportOption.number("tcp.reconnectDelayMs",
            100, 1, 3_600_000, "first reconnect delay; it doubles after each failed try");
    public static final TransportOption<Long> RECONNECT_MAX_DELAY_MS = TransportOption.number(
            "tcp.reconnectMaxDelayMs", 5_000, 1, 3_600_000, "longest reconnect delay");
    public static final TransportOption<Boolean> PATH_STATES = TransportOption.flag("tcp.pathStates", true,
            "path states: a target answers them; a host given a target list HOST:PORT,HOST:PORT,... watches every"
                    + " peer's and sends I/O to the peer optimized for its volumes (a replicated volume's leader)");
    public static final TransportOption<Long> FLUSH_FRAMES = TransportOption.number("tcp.flushFrames", -1, -1, 1 << 20,
            "an I/O thread that queues this many frames on a connection in one pass sends them at once"
                    + " (0: only at the end of the pass; -1: a quarter of the queue depth, at least 4)");

    public static final TransportOption<Boolean> TLS = TransportOption.flag("tcp.tls", false,
            "TLS 1.3 on every connection, before HELLO (a target needs tcp.tlsCert and tcp.tlsKey; a host checks"
                    + " the target's certificate against tcp.tlsCa and the address it dialled; or both ends tcp.tlsPsk)");
    public static final TransportOption<String> TLS_CERT = TransportOption.text("tcp.tlsCert", "FILE", null,
            "this side's certificate chain (PEM): the target's, or the host's for mutual TLS");
    public static final TransportOption<String> TLS_KEY = TransportOption.text("tcp.tlsKey", "FILE", null,
            "the private key of tcp.tlsCert (PEM, unencrypted)");
    public static final TransportOption<String> TLS_CA = TransportOption.text("tcp.tlsCa", "FILE", null,
            "CA bundle (PEM) the peer's certificate must chain to (host: default trust store when empty)");
    public static final TransportOption<Boolean> TLS_VERIFY_CLIENT = TransportOption.flag("tcp.tlsVerifyClient", false,
            "a target accepts only hosts whose certificate chains to tcp.tlsCa (mutual TLS)");

    public static final TransportOption<String> TLS_PSK = TransportOption.text("tcp.tlsPsk", "FILE", null,
            "pre-shared keys instead of certificates (IDENTITY:HEXKEY lines, as psktool writes): a target accepts"
                    + " every identity of the file, a host offers one (TLS 1.3 with (EC)DHE; docs/SECURITY.md)");
    public static final TransportOption<String> TLS_PSK_IDENTITY = TransportOption.text("tcp.tlsPskIdentity", "NAME",
            null, "the identity of tcp.tlsPsk a host offers (needed when the file holds several)");

    public static final TransportOption<String> TLS_ENGINE = TransportOption.choice("tcp.tlsEngine", "auto",
            List.of("auto", "openssl", "jdk"), "what encrypts the TLS records: openssl (BoringSSL, native, less CPU per"
                    + " byte), jdk, or auto (openssl where its library loads, else jdk); a host and a target may differ");

    public static final TransportOption<String> ACCESS = TransportOption.text("tcp.access", "FILE", null,
            "which volumes each host may use, read-write or read-only, by its certificate (CN or subjectAltName)"
                    + " or PSK identity; needs tcp.tls=true with tcp.tlsVerifyClient=true or tcp.tlsPsk (docs/SECURITY.md)");

    /** Every tcp option, in the order the docs list them. */
    public static final List<TransportOption<?>> OPTIONS = List.of(IO_THREADS, SPIN_MICROS, POLL_MICROS, SPIN_YIELD,
            HEADER_DIGEST, DATA_DIGEST, MAX_TRANSFER, REQUEST_TIMEOUT_MS, CONNECT_TIMEOUT_MS, FRAME_TIMEOUT_MS,
            RECONNECT, RECONNECT_DELAY_MS, RECONNECT_MAX_DELAY_MS, PATH_STATES, FLUSH_FRAMES, TLS, TLS_CERT, TLS_KEY, TLS_CA,
            TLS_VERIFY_CLIENT, TLS_PSK, TLS_PSK_IDENTITY, TLS_ENGINE, ACCESS);

    public int ioThreads = IO_THREADS.defaultValue().intValue();
    public long spinMicros = SPIN_MICROS.defaultValue();
    public long pollMicros = POLL_MICROS.defaultValue();
    public boolean spinYield = SPIN_YIELD.defaultValue();
    public boolean headerDigest = HEADER_DIGEST.defaultValue();
    public boolean dataDigest = DATA_DIGEST.defaultValue();
    public int maxTransferBytes = MAX_TRANSFER.defaultValue().intValue();
    /** The deepest queue a target grants (not an option). */
    public int maxQueueDepth = 4096;
    public long requestTimeoutMillis = REQUEST_TIMEOUT_MS.defaultValue();
    public long connectTimeoutMillis = CONNECT_TIMEOUT_MS.defaultValue();
    public long frameTimeoutMillis = FRAME_TIMEOUT_MS.defaultValue();
    public boolean reconnect = RECONNECT.defaultValue();
    public long reconnectDelayMillis = RECONNECT_DELAY_MS.defaultValue();
    public long reconnectMaxDelayMillis = RECONNECT_MAX_DELAY_MS.defaultValue();
    public boolean pathStates = PATH_STATES.defaultValue();
    public int flushFrames = FLUSH_FRAMES.defaultValue().intValue();
    /** TLS on every connection, its files loaded; null: plaintext. */
    public TcpTls tls;
    /**
     * Which volumes each host may use, by its certificate; null: every host that connects may use
     * every volume. A target with rules needs {@link #tls} with client verification.
     */
    public AccessRules access;

    /** The most I/O threads {@code tcp.ioThreads=0} starts: one per CPU the JVM may use. */
    public static int autoIoThreadCeiling() {
        return Math.max(1, Runtime.getRuntime().availableProcessors());
    }

    public static TcpConfig defaults() {
        return new TcpConfig();
    }

    /**
     * The settings {@code options} give (defaults for the rest).
     *
     * @throws IllegalArgumentException for an unknown {@code tcp.*} name or a bad value
     */
    public static TcpConfig from(TransportOptions options) {
        options.check(TcpTransportProvider.NAME, OPTIONS);
        TcpConfig c = new TcpConfig();
        c.ioThreads = options.get(IO_THREADS).intValue();
        c.spinMicros = options.get(SPIN_MICROS);
        c.pollMicros = options.get(POLL_MICROS);
        c.spinYield = options.get(SPIN_YIELD);
        c.headerDigest = options.get(HEADER_DIGEST);
        c.dataDigest = options.get(DATA_DIGEST);
        c.maxTransferBytes = options.get(MAX_TRANSFER).intValue();
        c.requestTimeoutMillis = options.get(REQUEST_TIMEOUT_MS);
        c.connectTimeoutMillis = options.get(CONNECT_TIMEOUT_MS);
        c.frameTimeoutMillis = options.get(FRAME_TIMEOUT_MS);
        c.reconnect = options.get(RECONNECT);
        c.reconnectDelayMillis = options.get(RECONNECT_DELAY_MS);
        c.reconnectMaxDelayMillis = options.get(RECONNECT_MAX_DELAY_MS);
        c.pathStates = options.get(PATH_STATES);
        c.flushFrames = options.get(FLUSH_FRAMES).intValue();
        String cert = options.get(TLS_CERT);
        String key = options.get(TLS_KEY);
        String ca = options.get(TLS_CA);
        boolean verify = options.get(TLS_VERIFY_CLIENT);
        boolean engineGiven = options.asMap().containsKey(TLS_ENGINE.name());
        TlsEngine engine = TlsEngine.parse(options.get(TLS_ENGINE));
        String psk = options.get(TLS_PSK);
        String pskIdentity = options.get(TLS_PSK_IDENTITY);
        if (pskIdentity != null && psk == null) {
            throw new IllegalArgumentException("tcp.tlsPskIdentity needs tcp.tlsPsk");
        }
        if (options.get(TLS) && psk != null) {
            if (cert != null || key != null || ca != null || verify || engineGiven) {
                throw new IllegalArgumentException("tcp.tlsPsk replaces certificates: tcp.tlsCert, tcp.tlsKey, tcp.tlsCa,"
                        + " tcp.tlsVerifyClient and tcp.tlsEngine do not go with it");
            }
            c.tls = TcpTls.psk(path(psk), pskIdentity);
        } else if (options.get(TLS)) {
            c.tls = TcpTls.load(path(cert), path(key), path(ca), verify, engine);
        } else if (cert != null || key != null || ca != null || verify || engineGiven || psk != null) {
            throw new IllegalArgumentException("tcp.tlsCert, tcp.tlsKey, tcp.tlsCa, tcp.tlsVerifyClient, tcp.tlsPsk and "
                    + "tcp.tlsEngine need tcp.tls=true");
        }
        String access = options.get(ACCESS);
        if (access != null) {
            if (!verify && psk == null) {
                // without a verified certificate or a proven key a host has no identity for the rules to name
                throw new IllegalArgumentException("tcp.access needs tcp.tls=true with tcp.tlsVerifyClient=true or tcp.tlsPsk");
            }
            c.access = AccessRules.read(path(access));
        }
        return c;
    }

    private static java.nio.file.Path path(String s) {
        return s == null ? null : java.nio.file.Path.of(s);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "ioThreads=%d spin=%dus poll=%dus headerDigest=%s dataDigest=%s maxTransfer=%d"
                + " flushFrames=%s", ioThreads, spinMicros, pollMicros, headerDigest, dataDigest, maxTransferBytes,
                flushFrames < 0 ? "auto" : Integer.toString(flushFrames)) + (tls == null ? "" : " tls=TLSv1.3 engine=" + tls.engine())
                + (access == null ? "" : " access=" + access.size() + " rule(s)");
    }
}
