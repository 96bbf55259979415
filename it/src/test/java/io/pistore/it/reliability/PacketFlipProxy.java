package io.pistore.it.reliability;

import io.pistore.transport.rdma.verbs.soft.SoftPackets;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * A TCP proxy between two soft RDMA devices (the packet path of docs/RDMA.md: length-prefixed frames,
 * a CRC-32 at the end of each) that flips one bit, at a chosen rate, somewhere after the length field
 * of frames that carry data: SEND, RDMA WRITE and READ responses (header, payload or CRC). It counts
 * the request frames it sees again (a PSN at or below the highest one seen in that direction): the
 * retransmissions that a dropped frame causes.
 */
final class PacketFlipProxy implements AutoCloseable {
    final LongAdder injected = new LongAdder();
    final LongAdder frames = new LongAdder();
    final LongAdder resentRequests = new LongAdder();
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final double rate;
    private final Random random;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    PacketFlipProxy(String targetAddress, double rate, long seed) throws IOException {
        int colon = targetAddress.lastIndexOf(':');
        this.target = new InetSocketAddress(targetAddress.substring(0, colon),
                Integer.parseInt(targetAddress.substring(colon + 1)));
        this.rate = rate;
        this.random = new Random(seed);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "packet-flip-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket host = server.accept();
                Socket tgt = new Socket(target.getAddress(), target.getPort());
                host.setTcpNoDelay(true);
                tgt.setTcpNoDelay(true);
                sockets.add(host);
                sockets.add(tgt);
                pump(host, tgt, "up");
                pump(tgt, host, "down");
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to, String dir) {
        Thread t = new Thread(() -> {
            int highestPsn = -1;
            try (InputStream raw = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                DataInputStream in = new DataInputStream(raw);
                byte[] f = new byte[1 << 16];
                while (true) {
                    in.readFully(f, 0, 4);
                    int rest = SoftPackets.getInt(f, 0);
                    if (f.length < 4 + rest) {
                        byte[] g = new byte[4 + rest];
                        System.arraycopy(f, 0, g, 0, 4);
                        f = g;
                    }
                    in.readFully(f, 4, rest);
                    int len = 4 + rest;
                    int op = SoftPackets.op(f);
                    frames.increment();
                    if (SoftPackets.isRequest(op)) {
                        int psn = SoftPackets.psn(f);
                        if (psn <= highestPsn) {
                            resentRequests.increment();
                        }
                        highestPsn = Math.max(highestPsn, psn);
                    }
                    if (SoftPackets.carriesData(op) && len > SoftPackets.HEADER + SoftPackets.CRC + 64) {
                        double roll;
                        int at;
                        int bit;
                        synchronized (random) {
                            roll = random.nextDouble();
                            at = 4 + random.nextInt(len - 4);
                            bit = random.nextInt(8);
                        }
                        if (roll < rate) {
                            f[at] ^= (byte) (1 << bit);
                            injected.increment();
                        }
                    }
                    out.write(f, 0, len);
                }
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
        }, "packet-flip-proxy-" + dir);
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
