package io.pistore.it.reliability;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on loopback in front of a target: each accepted connection gets one to the target and
 * two copying threads, one each way, that a subclass fills in (the fault-injecting proxies). When
 * either side closes, both close.
 */
abstract class LoopbackRelay implements AutoCloseable {
    /** Copies frames from one side to the other until a side closes (an IOException). */
    interface Copier {
        void copy(DataInputStream in, OutputStream out) throws IOException;
    }

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final String name;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    LoopbackRelay(String targetAddress, String name) throws IOException {
        int colon = targetAddress.lastIndexOf(':');
        this.target = new InetSocketAddress(targetAddress.substring(0, colon),
                Integer.parseInt(targetAddress.substring(colon + 1)));
        this.name = name;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    /** Starts accepting; a subclass calls it once its own fields are set. */
    final void start() {
        Thread t = new Thread(this::accept, name + "-accept");
        t.setDaemon(true);
        t.start();
    }

    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Starts the two copying threads of a new connection ({@link #pump} each way). */
    abstract void relay(Socket host, Socket target);

    private void accept() {
        while (!closed) {
            try {
                Socket host = server.accept();
                Socket tgt = new Socket(target.getAddress(), target.getPort());
                host.setTcpNoDelay(true);
                tgt.setTcpNoDelay(true);
                sockets.add(host);
                sockets.add(tgt);
                relay(host, tgt);
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Runs {@code copier} from {@code from} to {@code to} on a daemon thread; closes both when it ends. */
    final void pump(Socket from, Socket to, String direction, Copier copier) {
        Thread t = new Thread(() -> {
            try (DataInputStream in = new DataInputStream(from.getInputStream()); OutputStream out = to.getOutputStream()) {
                copier.copy(in, out);
            } catch (IOException e) {
                // one side closed: close the other
            } finally {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // closing
                }
            }
        }, name + "-" + direction);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
