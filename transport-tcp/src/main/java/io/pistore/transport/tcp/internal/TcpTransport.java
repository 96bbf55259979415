package io.pistore.transport.tcp.internal;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The TCP transport: a group of I/O threads shared by its listeners and host connections. */
public final class TcpTransport implements BlockTransport {
    private final TcpConfig config;
    private final EventLoopGroup group;
    private final Set<TcpTargetListener> listeners = ConcurrentHashMap.newKeySet();
    private final Set<TcpHostConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private ScheduledExecutorService reconnects;

    public TcpTransport(TcpConfig config) {
        this.config = config;
        this.group = new EventLoopGroup(config.ioThreads > 0 ? config.ioThreads : TcpConfig.autoIoThreadCeiling(),
                config.ioThreads == 0, TimeUnit.MICROSECONDS.toNanos(config.spinMicros),
                TimeUnit.MICROSECONDS.toNanos(config.pollMicros), config.spinYield);
    }

    TcpConfig config() {
        return config;
    }

    EventLoopGroup group() {
        return group;
    }

    @Override
    public TargetListener listen(String address, TargetHandler handler) throws IOException {
        ensureOpen();
        TcpTargetListener l = new TcpTargetListener(this, Addresses.parse(address), handler);
        listeners.add(l);
        return l;
    }

    @Override
    public HostConnection connect(String address, ConnectOptions options) throws IOException {
        ensureOpen();
        return TcpHostConnection.connect(this, address, options);
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("the tcp transport is closed");
        }
    }

    /**
     * Runs {@code attempt} after {@code delayMillis} on the transport's reconnect thread (one thread,
     * made on first use, so attempts never run concurrently nor on an I/O thread, where waiting for
     * a handshake would deadlock). Returns false when the transport is closed.
     */
    synchronized boolean scheduleReconnect(Runnable attempt, long delayMillis) {
        if (closed) {
            return false;
        }
        if (reconnects == null) {
            reconnects = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "pistore-tcp-reconnect");
                t.setDaemon(true);
                return t;
            });
        }
        reconnects.schedule(attempt, delayMillis, TimeUnit.MILLISECONDS);
        return true;
    }

    void track(TcpHostConnection c) {
        connections.add(c);
    }

    void forget(TcpHostConnection c) {
        connections.remove(c);
    }

    void forget(TcpTargetListener l) {
        listeners.remove(l);
    }

    /**
     * How the I/O threads waited, summed over them: {events caught while polling, blocking waits,
     * polls abandoned because the thread lost its CPU}. For notes and tests.
     */
    public long[] waitCounters() {
        long polled = 0;
        long blocked = 0;
        long contended = 0;
        for (EventLoop l : group.loops()) {
            polled += l.waiting().caught();
            blocked += l.waiting().blockingWaits();
            contended += l.waiting().lostCpu();
        }
        return new long[] {polled, blocked, contended};
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            closed = true;
            if (reconnects != null) {
                reconnects.shutdownNow();
            }
        }
        for (TcpHostConnection c : new ArrayList<>(connections)) {
            c.close();
        }
        for (TcpTargetListener l : new ArrayList<>(listeners)) {
            l.close();
        }
        group.shutdown();
    }
}
