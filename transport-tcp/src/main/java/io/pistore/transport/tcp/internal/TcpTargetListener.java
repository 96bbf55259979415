package io.pistore.transport.tcp.internal;

import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.TcpTls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A listening target: accepts connections on one loop and spreads them over the group. Volume ids
 * are assigned here, once per name, so every connection of this listener agrees on them.
 */
final class TcpTargetListener implements TargetListener, Selectable {
    private final TcpTransport transport;
    private final EventLoop acceptLoop;
    private final ServerSocketChannel server;
    private final TargetHandler handler;
    private final String address;
    /** The server side of TLS, or null for plaintext. */
    private final TcpTls tls;
    private final Set<TcpTargetQueue> connections = ConcurrentHashMap.newKeySet();
    private final Map<String, Integer> ids = new ConcurrentHashMap<>();
    /** Volumes by id (index = id; ids are small and dense). */
    private volatile WireVolume[] byId = new WireVolume[0];
    private volatile boolean closed;
    /** The path states hosts ask for, or null when they are turned off ({@code tcp.pathStates=false}). */
    private final io.pistore.spi.PathStateBoard pathStates;

    TcpTargetListener(TcpTransport transport, InetSocketAddress bind, TargetHandler handler) throws IOException {
        this.transport = transport;
        this.handler = handler;
        this.pathStates = transport.config().pathStates ? new io.pistore.spi.PathStateBoard(handler, PATH_TICK_MS) : null;
        this.acceptLoop = transport.group().next();
        TcpTls t = transport.config().tls;
        if (t != null && !t.canListen()) {
            throw new IOException("cannot listen with TLS: tcp.tls needs tcp.tlsCert and tcp.tlsKey (or tcp.tlsPsk) on a target");
        }
        this.tls = t;
        if (transport.config().access != null && (tls == null || !tls.identifiesHosts())) {
            throw new IOException("cannot listen with access rules: tcp.access needs tcp.tls=true with "
                    + "tcp.tlsVerifyClient=true or tcp.tlsPsk");
        }
        this.server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(bind, 128);
            server.configureBlocking(false);
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot listen on " + Addresses.format(bind) + ": " + TcpConnection.ioReason(e), e);
        }
        InetSocketAddress a = (InetSocketAddress) server.getLocalAddress();
        this.address = Addresses.format(a);
        refreshVolumes();
        CountDownLatch registered = new CountDownLatch(1);
        IOException[] failure = new IOException[1];
        boolean queued = acceptLoop.execute(() -> {
            try {
                acceptLoop.register(server, SelectionKey.OP_ACCEPT, this);
            } catch (IOException e) {
                failure[0] = e;
            }
            registered.countDown();
        });
        try {
            if (!queued || !registered.await(10, TimeUnit.SECONDS) || failure[0] != null) {
                server.close();
                throw new IOException("cannot listen on " + address + ": "
                        + (failure[0] != null ? failure[0].getMessage() : "the transport is closed"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.close();
            throw new IOException("interrupted while starting to listen");
        }
    }

    /** How often held path state queries look at the handler's states. */
    static final long PATH_TICK_MS = 20;

    /** The path states hosts ask for, or null when they are turned off. */
    io.pistore.spi.PathStateBoard pathStates() {
        return pathStates;
    }

    TcpConfig config() {
        return transport.config();
    }

    @Override
    public String address() {
        return address;
    }

    /** Re-reads the handler's volumes; new names get new ids, known names keep theirs. */
    synchronized List<WireVolume> refreshVolumes() {
        List<WireVolume> list = new ArrayList<>();
        for (VolumeInfo v : handler.volumes()) {
            int id = ids.computeIfAbsent(v.name(), n -> ids.size() + 1);
            list.add(new WireVolume(id, v));
        }
        WireVolume[] a = new WireVolume[ids.size() + 1];
        for (WireVolume w : list) {
            a[w.id] = w;
        }
        byId = a;
        return list;
    }

    /** The volume of an id, or null. */
    WireVolume volume(int id) {
        WireVolume[] a = byId;
        return id > 0 && id < a.length ? a[id] : null;
    }

    @Override
    public void onSelect(SelectionKey key) {
        for (int i = 0; i < 64; i++) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                TcpConnection.LOG.log(System.Logger.Level.WARNING, "pistore tcp target: accept on " + address + " failed: "
                        + TcpConnection.ioReason(e));
                return;
            }
            if (ch == null) {
                return;
            }
            try {
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException e) {
                closeQuietly(ch);
                continue;
            }
            EventLoop loop = transport.group().next();
            TcpTargetQueue c = new TcpTargetQueue(loop, ch, this, handler);
            connections.add(c);
            Runnable reg = () -> {
                if (closed) {
                    c.close("the listener is closed", false);
                    return;
                }
                try {
                    c.key = loop.register(ch, SelectionKey.OP_READ, c);
                    c.opened();
                    if (tls != null) {
                        c.startTls(tls.serverStream(ch));
                    }
                } catch (javax.net.ssl.SSLException e) {
                    c.close("TLS handshake failed: " + TcpConnection.ioReason(e), true);
                } catch (IOException e) {
                    c.close("cannot register: " + TcpConnection.ioReason(e), false);
                } catch (ProtocolException e) {
                    c.close(e.getMessage(), true);
                }
            };
            if (loop.inLoop()) {
                reg.run();
            } else if (!loop.execute(reg)) {
                connections.remove(c);
                closeQuietly(ch);
            }
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    void forget(TcpTargetQueue c) {
        connections.remove(c);
    }

    @Override
    public void onLoopClose(String reason) {
        closeServer();
    }

    private void closeServer() {
        try {
            server.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    /** Stops accepting and closes every connection of this listener; returns once they are closed (at most 10 s). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (pathStates != null) {
            pathStates.close();
        }
        runOn(acceptLoop, this::closeServer);
        for (TcpTargetQueue c : new ArrayList<>(connections)) {
            runOn(c.loop, () -> c.close("the listener is closed", false));
        }
        transport.forget(this);
    }

    private static void runOn(EventLoop loop, Runnable r) {
        if (loop.inLoop()) {
            r.run();
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        if (loop.execute(() -> {
            try {
                r.run();
            } finally {
                done.countDown();
            }
        })) {
            try {
                done.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
