package io.pistore.transport.tcp.internal;

import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A connection this end opens to a target (a host queue, a path watch): a non-blocking socket with
 * TCP_NODELAY, connected on the loop thread, TLS first when configured, then the host's HELLO. What
 * follows the greeting is the subclass's.
 */
abstract class TcpClientConnection extends TcpConnection {
    final TcpConfig cfg;
    final InetSocketAddress address;
    final HostHandshake handshake;

    TcpClientConnection(EventLoop loop, SocketChannel ch, String peer, TcpConfig cfg, InetSocketAddress address,
                        HostHandshake handshake) {
        super(loop, ch, "host", peer);
        this.cfg = cfg;
        this.address = address;
        this.handshake = handshake;
    }

    /** A socket for a connection to a target: non-blocking, TCP_NODELAY; closed again if that fails. */
    static SocketChannel newChannel() throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return ch;
    }

    /** Hands the connect to the loop thread; a closed transport closes the socket and says so. */
    final void start() throws IOException {
        if (!loop.execute(this::begin)) {
            ch.close();
            throw new IOException("the transport is closed");
        }
    }

    private void begin() {
        try {
            key = loop.register(ch, SelectionKey.OP_CONNECT, this);
            if (ch.connect(address)) {
                onConnectable();
            }
        } catch (javax.net.ssl.SSLException e) {
            close("TLS handshake failed: " + ioReason(e), true);
        } catch (IOException e) {
            close("cannot connect: " + ioReason(e), false);
        } catch (ProtocolException e) {
            close(e.getMessage(), true);
        }
    }

    @Override
    final void onConnectable() throws IOException, ProtocolException {
        if (ch.isConnectionPending() && !ch.finishConnect()) {
            return;
        }
        key.interestOps(SelectionKey.OP_READ);
        if (cfg.tls != null) {
            startTls(cfg.tls.clientStream(ch, address.getHostString(), address.getPort()));
        } else {
            send(handshake.hello());
        }
    }

    @Override
    final void tlsReady() {
        send(handshake.hello());
    }
}
