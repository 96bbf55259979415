package io.pistore.frontend.nbd;

import io.pistore.engine.BlockDevice;
import io.pistore.spi.net.ListenAddress;
import io.pistore.spi.net.PolitePoll;
import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.PskKeys;
import io.pistore.security.tls.PskTlsChannel;
import io.pistore.security.tls.TlsChannel;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsStream;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.VolumeInfo;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The NBD frontend: a server speaking the NBD protocol (fixed newstyle) that exports every volume
 * of a {@link HostConnection} by name. Data enters and leaves the engine through {@link BlockDevice}
 * data-only requests, so PI is inserted where data enters and checked and stripped where it leaves,
 * over whichever transport the connection uses; a PI check failure reaches the NBD client as EIO
 * with the first bad offset (structured replies). See docs/NBD.md.
 *
 * <p>One thread accepts; each client connection gets one thread that reads and parses requests
 * (replies are written by whichever thread completes the request). The server never closes the
 * host connection it was given.
 */
public final class NbdServer implements AutoCloseable {
    /** The IANA port of NBD. */
    public static final int DEFAULT_PORT = 10809;

    /** Default longest poll for a client's next request before blocking, in microseconds. */
    public static final long DEFAULT_SPIN_MICROS = 100;
    /** Largest accepted poll budget, in microseconds. */
    public static final long MAX_SPIN_MICROS = 10_000;
    /** Default time a request failing with a transport error is sent again before the client sees EIO. */
    public static final long DEFAULT_RESEND_MILLIS = 30_000;

    /** Limits, polling and logging of a server. */
    public static final class Options {
        int maxConnections = 64;
        long handshakeTimeoutMillis = 30_000;
        int maxInFlight = 128;
        long maxInFlightBytes = 64L << 20;
        int maxTransferBytes = TransportCapabilities.MAX_TRANSFER_BYTES;
        long spinNanos = TimeUnit.MICROSECONDS.toNanos(DEFAULT_SPIN_MICROS);
        long resendMillis = DEFAULT_RESEND_MILLIS;
        boolean resendFlushes;
        boolean singleRemoteTarget;
        Consumer<String> log = line -> { };
        NbdTls tls = NbdTls.OFF;
        TlsContext tlsContext;
        PskKeys tlsPsk;
        AccessRules access;
        Consumer<String> debugLog = line -> { };

        /** Most client connections at once; more are closed at accept (default 64). */
        public Options maxConnections(int n) {
            this.maxConnections = positive(n, "maxConnections");
            return this;
        }

        /** Longest wait for each handshake message before the connection is closed (default 30 s). */
        public Options handshakeTimeoutMillis(long ms) {
            this.handshakeTimeoutMillis = positive(ms, "handshakeTimeoutMillis");
            return this;
        }

        /** Most requests of one connection in flight before it stops reading (default 128). */
        public Options maxInFlight(int n) {
            this.maxInFlight = positive(n, "maxInFlight");
            return this;
        }

        /** Most payload bytes of one connection in flight or waiting to be sent (default 64 MiB). */
        public Options maxInFlightBytes(long n) {
            this.maxInFlightBytes = positive(n, "maxInFlightBytes");
            return this;
        }

        /** Largest data+metadata of one block request of the transport (bounds the advertised payload). */
        public Options maxTransferBytes(int n) {
            this.maxTransferBytes = positive(n, "maxTransferBytes");
            return this;
        }

        /**
         * Longest a connection's thread polls for the client's next request before it blocks
         * (default {@value #DEFAULT_SPIN_MICROS} µs; 0: never polls). The poll adapts to the gaps
         * between requests and yields the CPU; see docs/NBD.md.
         */
        public Options spinMicros(long micros) {
            if (micros < 0 || micros > MAX_SPIN_MICROS) {
                throw new IllegalArgumentException("spinMicros must be 0 to " + MAX_SPIN_MICROS + ", not " + micros);
            }
            this.spinNanos = TimeUnit.MICROSECONDS.toNanos(micros);
            return this;
        }

        /**
         * How long a request that failed with a transport error (its connection to the target lost
         * while it was in flight, or being reconnected) is sent again, every 100 ms, before the
         * client sees EIO (default {@value #DEFAULT_RESEND_MILLIS} ms; 0: EIO at once). Safe because
         * every NBD request is idempotent at block level; see docs/NBD.md.
         */
        public Options resendMillis(long ms) {
            if (ms < 0) {
                throw new IllegalArgumentException("resendMillis must be 0 or more, not " + ms);
            }
            this.resendMillis = ms;
            return this;
        }

        /**
         * Whether a flush that failed with a transport error is sent again too (default false: it
         * answers EIO). Only where every write the target acknowledged survives the loss of the
         * connection, as on the peers of a replicated volume; a single target that restarted may
         * have lost writes replied before and not flushed. See docs/NBD.md.
         */
        public Options resendFlushes(boolean on) {
            this.resendFlushes = on;
            return this;
        }

        /**
         * Whether the volumes are those of one remote target that may restart (a gateway given one
         * address; default false): then the first flush of a volume after the connection reconnected
         * answers EIO when writes replied before the reconnect were not flushed, since the target may
         * have lost them. See docs/NBD.md.
         */
        public Options singleRemoteTarget(boolean on) {
            this.singleRemoteTarget = on;
            return this;
        }

        /**
         * TLS: whether STARTTLS is refused, offered or required, and the server certificate it uses
         * (null only with {@link NbdTls#OFF}).
         */
        public Options tls(NbdTls mode, TlsContext context) {
            if (mode != NbdTls.OFF && context == null) {
                throw new IllegalArgumentException("NBD TLS " + mode + " needs a certificate and key");
            }
            this.tls = mode;
            this.tlsContext = mode == NbdTls.OFF ? null : context;
            this.tlsPsk = null;
            return this;
        }

        /**
         * TLS with pre-shared keys (TLS-PSK, as libnbd's {@code tls-psk-file} and qemu's
         * {@code tls-creds-psk} speak it) instead of a certificate: whether STARTTLS is refused,
         * offered or required, and the keys it accepts (null only with {@link NbdTls#OFF}).
         */
        public Options tls(NbdTls mode, PskKeys keys) {
            if (mode != NbdTls.OFF && keys == null) {
                throw new IllegalArgumentException("NBD TLS " + mode + " needs pre-shared keys");
            }
            this.tls = mode;
            this.tlsPsk = mode == NbdTls.OFF ? null : keys;
            this.tlsContext = null;
            return this;
        }

        /** The server side of a TLS session over an accepted socket, with the configured certificate or keys. */
        TlsStream serverTls(SocketChannel ch) {
            return tlsPsk != null ? new PskTlsChannel(ch, tlsPsk) : new TlsChannel(ch, tlsContext.serverEngine());
        }

        /** Whether every TLS client proves an identity: a pre-shared key, or a required client certificate. */
        boolean everyTlsClientHasIdentity() {
            return tlsPsk != null || tlsContext != null && tlsContext.requiresClientCertificate();
        }

        /**
         * Which exports each TLS client may use, by its certificate or pre-shared key identity (null,
         * the default: every client may use every export). Needs {@link NbdTls#REQUIRE} and client
         * certificates or pre-shared keys, so that every client has an identity.
         */
        public Options access(AccessRules access) {
            this.access = access;
            return this;
        }

        /** Where one line per connection event and per failed request goes. */
        public Options log(Consumer<String> log) {
            this.log = log;
            return this;
        }

        /** Where lines with internal figures go (how a connection's loop waited for input); default: nowhere. */
        public Options debugLog(Consumer<String> debugLog) {
            this.debugLog = debugLog;
            return this;
        }

        private static int positive(int n, String what) {
            if (n <= 0) {
                throw new IllegalArgumentException(what + " must be positive, not " + n);
            }
            return n;
        }

        private static long positive(long n, String what) {
            if (n <= 0) {
                throw new IllegalArgumentException(what + " must be positive, not " + n);
            }
            return n;
        }
    }

    private final HostConnection connection;
    private final Options options;
    private final ServerSocketChannel listener;
    private final Backend backend;
    private final Map<String, NbdExport> exports = new ConcurrentHashMap<>();
    /** Longest a handshake waits for the target's volume list ({@link #relisted}). */
    static final long RELIST_WAIT_MS = 2_000;
    private final Set<NbdConnection> connections = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.LongAdder accepted = new java.util.concurrent.atomic.LongAdder();
    private final Thread acceptor;
    /** Requests of every connection handed to the engine and not yet completed. */
    final java.util.concurrent.atomic.AtomicInteger engineRequests = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closing;

    private NbdServer(HostConnection connection, Options options, ServerSocketChannel listener) {
        this.connection = connection;
        this.options = options;
        this.listener = listener;
        this.backend = new Backend(options.resendMillis, options.resendFlushes,
                options.singleRemoteTarget && !options.resendFlushes);
        this.acceptor = new Thread(this::acceptLoop, "pistore-nbd-accept");
        this.acceptor.setDaemon(true);
    }

    /**
     * Starts a server on {@code address} ({@code HOST:PORT}, {@code :PORT}, {@code PORT} or
     * {@code HOST}; host 127.0.0.1 and port 10809 by default; port 0 picks a free one).
     */
    public static NbdServer start(String address, HostConnection connection, Options options) throws IOException {
        if (options.access != null && (options.tls != NbdTls.REQUIRE || !options.everyTlsClientHasIdentity())) {
            throw new IllegalArgumentException("an access file needs TLS required with client certificates or pre-shared keys");
        }
        InetSocketAddress a = parseAddress(address);
        ServerSocketChannel l = ServerSocketChannel.open();
        try {
            l.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            l.bind(a, 64);
        } catch (IOException | RuntimeException e) {
            l.close();
            throw e;
        }
        NbdServer s = new NbdServer(connection, options, l);
        s.acceptor.start();
        return s;
    }

    /** {@code HOST:PORT}, {@code :PORT}, {@code PORT} or {@code HOST}; 127.0.0.1 and 10809 by default. */
    public static InetSocketAddress parseAddress(String address) {
        return ListenAddress.parse(address, DEFAULT_PORT, "NBD");
    }

    /** The bound address (with the real port when 0 was asked for). */
    public InetSocketAddress address() {
        try {
            return (InetSocketAddress) listener.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException("server is closed", e);
        }
    }

    /** The export names, which are the volume names of the host connection. */
    public List<String> exportNames() {
        List<String> names = new ArrayList<>();
        for (VolumeInfo v : connection.volumes()) {
            names.add(v.name());
        }
        return names;
    }

    /**
     * The export of that name ({@code ""}: the only volume, if there is exactly one), or null. Over a
     * transport the target is asked for its volumes again first ({@link #relisted}).
     */
    NbdExport export(String name) {
        return exportIn(relisted(), name);
    }

    private NbdExport exportIn(List<VolumeInfo> vols, String name) {
        VolumeInfo found = null;
        if (name.isEmpty()) {
            if (vols.size() == 1) {
                found = vols.get(0);
            }
        } else {
            for (VolumeInfo v : vols) {
                if (v.name().equals(name)) {
                    found = v;
                    break;
                }
            }
        }
        if (found == null) {
            return null;
        }
        VolumeInfo info = found;
        return exports.compute(info.name(), (k, old) -> old != null && old.info().equals(info) ? old
                : new NbdExport(BlockDevice.open(connection, info.name()), backend, options.maxTransferBytes));
    }

    /** The volumes to list to a client: the target's, asked again first as for {@link #export}. */
    List<VolumeInfo> volumes() {
        return relisted();
    }

    /**
     * The connection's volumes after asking its target again (a volume created, deleted or grown
     * since the gateway connected: one round trip per handshake over a transport, none in process); a
     * target that does not answer within {@link #RELIST_WAIT_MS} leaves the list as known.
     */
    private List<VolumeInfo> relisted() {
        try {
            connection.relistVolumes().get(RELIST_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the list as known: the handshake goes on with it
        }
        return connection.volumes();
    }

    Options options() {
        return options;
    }

    boolean isClosing() {
        return closing;
    }

    void log(String line) {
        try {
            options.log.accept(line);
        } catch (RuntimeException ignored) {
            // a broken log never breaks the server
        }
    }

    void debug(String line) {
        try {
            options.debugLog.accept(line);
        } catch (RuntimeException ignored) {
            // a broken log never breaks the server
        }
    }

    /**
     * How the threads of the open connections waited for input, summed over them: polls run, requests
     * caught while polling, blocking waits, and polls given up because the thread lost its CPU.
     */
    public PolitePoll.Counts waitCounters() {
        PolitePoll.Counts n = PolitePoll.Counts.NONE;
        for (NbdConnection c : connections) {
            n = n.plus(c.waiting());
        }
        return n;
    }

    /** Client connections open now (for counters). */
    public int connectionsOpen() {
        return connections.size();
    }

    /** Client connections accepted since start, refused ones not included (for counters). */
    public long connectionsAccepted() {
        return accepted.sum();
    }

    /** Requests resubmitted because the engine's queue was full (for counters). */
    public long queueFullRetries() {
        return backend.queueFullRetries();
    }

    /** Requests sent again after a transport error (the target's connection lost or reconnecting). */
    public long resends() {
        return backend.resends();
    }

    /** Requests answered with EIO because their transport errors outlasted the resend deadline. */
    public long resendsGivenUp() {
        return backend.resendsGivenUp();
    }

    /** How many connections transmit on the export of that name now. */
    public int connectionsTo(String exportName) {
        int n = 0;
        for (NbdConnection c : connections) {
            if (exportName.equals(c.export())) {
                n++;
            }
        }
        return n;
    }

    /**
     * Ends the connections that transmit on the export of that name (before the volume behind it
     * goes away), waiting up to 5 s for them to end; returns how many there were.
     */
    public int disconnect(String exportName) {
        List<NbdConnection> ending = new java.util.ArrayList<>();
        for (NbdConnection c : connections) {
            if (exportName.equals(c.export())) {
                ending.add(c);
                c.shutdown("export " + exportName + " is being deleted");
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline && ending.stream().anyMatch(connections::contains)) {
            sleepQuietly(10);
        }
        return ending.size();
    }

    void ended(NbdConnection c) {
        connections.remove(c);
    }

    private void acceptLoop() {
        while (!closing) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closing) {
                    return;
                }
                log("nbd: accept failed: " + e);
                sleepQuietly(100);
                continue;
            }
            String peer = peerOf(ch);
            if (connections.size() >= options.maxConnections) {
                log("nbd: " + peer + " refused: " + options.maxConnections + " connections already");
                closeQuietly(ch);
                continue;
            }
            NbdConnection c = new NbdConnection(this, ch, peer);
            connections.add(c);
            accepted.increment();
            Thread t = new Thread(c, "pistore-nbd-" + peer);
            t.setDaemon(true);
            t.start();
        }
    }

    private static String peerOf(SocketChannel ch) {
        try {
            InetSocketAddress a = (InetSocketAddress) ch.getRemoteAddress();
            return a.getAddress().getHostAddress() + ":" + a.getPort();
        } catch (IOException | RuntimeException e) {
            return "peer";
        }
    }

    /**
     * Stops accepting, ends every connection, and waits (up to 5 s) for requests already handed to
     * the engine to complete, so that a flush after close covers them.
     */
    @Override
    public void close() {
        closing = true;
        closeQuietly(listener);
        for (NbdConnection c : connections) {
            c.shutdown();
        }
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (engineRequests.get() > 0 && System.nanoTime() < deadline) {
            sleepQuietly(10);
        }
        backend.close();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
