package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The passive side of connection management on the packet path: a TCP listener on the listen
 * address itself, so {@code --listen 127.0.0.1:4520} and {@code --target 127.0.0.1:4520} meet across
 * processes. Each connection is REQ (the host's private data) → the handler's
 * {@code onConnectRequest} → REP, or REJ with the handler's message → RTU → {@code onEstablished},
 * then the socket becomes the connection's {@link SoftLink}.
 */
final class SoftPacketListener {
    static final int HANDSHAKE_MILLIS = 10_000;

    private final SoftDevice device;
    private final ServerSocket server;
    private final ConnectHandler handler;
    private volatile boolean closed;

    private SoftPacketListener(SoftDevice device, ServerSocket server, ConnectHandler handler) {
        this.device = device;
        this.server = server;
        this.handler = handler;
    }

    /** Binds {@code host:port} (port 0: any free one). */
    static SoftPacketListener bind(SoftDevice device, String host, int port, ConnectHandler handler)
            throws VerbsException {
        ServerSocket s = null;
        try {
            s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(host, port), 128);
        } catch (IOException e) {
            try {
                if (s != null) {
                    s.close();
                }
            } catch (IOException ignored) {
                // closing
            }
            throw new VerbsException(98, "address " + host + ":" + port + " is already in use or cannot be bound ("
                    + e.getMessage() + ")");
        }
        SoftPacketListener l = new SoftPacketListener(device, s, handler);
        Thread t = new Thread(l::acceptLoop, "pistore-softnic-listen-" + s.getLocalPort());
        t.setDaemon(true);
        t.start();
        return l;
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return;
            }
            Thread t = new Thread(() -> handshake(s), "pistore-softnic-cm");
            t.setDaemon(true);
            t.start();
        }
    }

    private void handshake(Socket s) {
        SoftQp theirs = null;
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(HANDSHAKE_MILLIS);
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream o = s.getOutputStream();
            byte[] req = SoftPackets.readFrame(in);
            if (SoftPackets.op(req) != SoftPackets.REQ) {
                throw new IOException("expected a REQ");
            }
            ByteBuffer pdata = ByteBuffer.wrap(SoftPackets.payloadOf(req));
            String peer = "soft@" + s.getRemoteSocketAddress();
            ConnectHandler.Accept acc;
            try {
                acc = handler.onConnectRequest(peer, pdata.duplicate());
                device.checkQp(acc.config());
            } catch (IOException | RuntimeException e) {
                SoftPackets.writeFrame(o, SoftPackets.REJ, String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8));
                s.close();
                return;
            }
            theirs = new SoftQp(device, (SoftPd) acc.pd(), (SoftCq) acc.sendCq(), (SoftCq) acc.recvCq(), acc.config(),
                    SoftFabric.nextQpNum());
            SoftPackets.writeFrame(o, SoftPackets.REP, new byte[0]);
            byte[] rtu = SoftPackets.readFrame(in);
            if (SoftPackets.op(rtu) != SoftPackets.RTU) {
                throw new IOException("expected an RTU");
            }
            s.setSoTimeout(0);
            SoftLink link = new SoftLink(theirs, s, "qp" + theirs.qpNum());
            theirs.link = link;
            device.adopt(theirs);
            SoftConnection passive = new SoftConnection(theirs, peer, pdata, handler, acc.context());
            handler.onEstablished(passive);
            link.start();
        } catch (IOException e) {
            if (theirs != null) {
                theirs.close();
            }
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
    }
}
