import io.pistore.security.tls.TlsChannel;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * The CPU one direction of a TlsChannel costs per KiB, writer and reader apart: one thread writes
 * 256 KiB direct buffers (as the tcp transport's send buffer) through a TlsChannel over a loopback
 * socket, another reads them into a 256 KiB direct buffer (its receive buffer); each thread's CPU
 * time is counted after a warm-up, so other work on the machine does not count. Threads wait for
 * the socket in a selector, never spinning. "plain" runs the same over the bare socket.
 *
 * <p>Run by tls-path-probe.sh: {@code java -cp RUNTIME_JARS TlsPathProbe.java MODE CERT KEY MIB}, MODE
 * plain, or TLS on the engine {@code openssl}, {@code jdk} or {@code tls} (the default engine).
 */
public class TlsPathProbe {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final int BUF = 256 * 1024;

    interface Io {
        int read(ByteBuffer b) throws IOException;

        int write(ByteBuffer b) throws IOException;

        boolean flush() throws IOException;

        boolean buffered();
    }

    public static void main(String[] args) throws Exception {
        boolean tls = !args[0].equals("plain");
        TlsEngine engine = args[0].equals("tls") ? TlsEngine.AUTO : tls ? TlsEngine.parse(args[0]) : null;
        Path cert = Path.of(args[1]);
        Path key = Path.of(args[2]);
        long mib = Long.parseLong(args[3]);
        try (ServerSocketChannel l = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            SocketChannel client = SocketChannel.open(l.getLocalAddress());
            SocketChannel server = l.accept();
            client.configureBlocking(false);
            server.configureBlocking(false);
            Io w;
            Io r;
            if (tls) {
                TlsContext sc = TlsContext.server(cert, key, cert, true, engine);
                TlsContext cc = TlsContext.client(cert, cert, key, engine);
                TlsChannel s = new TlsChannel(server, sc.serverEngine());
                TlsChannel c = new TlsChannel(client, cc.clientEngine("localhost", 1));
                CompletableFuture<Void> hs = CompletableFuture.runAsync(() -> {
                    try {
                        s.handshake(waiter(server));
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
                c.handshake(waiter(client));
                hs.get();
                w = io(c);
                r = io(s);
            } else {
                w = io(client);
                r = io(server);
            }
            long total = mib << 20;
            long warm = Math.min(total / 4, 256L << 20);
            long[] cpu = new long[4];
            Thread writer = new Thread(() -> run(() -> write(w, client, total, warm, cpu, 0)));
            Thread reader = new Thread(() -> run(() -> read(r, server, total, warm, cpu, 2)));
            writer.start();
            reader.start();
            writer.join();
            reader.join();
            double kib = (total - warm) / 1024.0;
            System.out.printf("%-7s writer %7.1f ns/KiB  reader %7.1f ns/KiB  both %7.1f ns/KiB  (%d MiB after %d MiB warm-up)%n",
                    args[0], (cpu[1] - cpu[0]) / kib, (cpu[3] - cpu[2]) / kib,
                    (cpu[1] - cpu[0] + cpu[3] - cpu[2]) / kib, (total - warm) >> 20, warm >> 20);
            client.close();
            server.close();
        }
    }

    interface Body {
        void run() throws Exception;
    }

    static void run(Body b) {
        try {
            b.run();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static void write(Io io, SocketChannel ch, long total, long warm, long[] cpu, int slot) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(BUF);
        for (int i = 0; i < BUF; i++) {
            b.put(i, (byte) (i * 31 + 7));
        }
        TlsChannel.Waiter wait = waiter(ch);
        long sent = 0;
        while (sent < total) {
            if (sent == warm) {
                cpu[slot] = MX.getCurrentThreadCpuTime();
            }
            b.clear();
            b.limit((int) Math.min(BUF, total - sent));
            while (b.hasRemaining()) {
                if (io.write(b) == 0 && b.hasRemaining()) {
                    wait.await(SelectionKey.OP_WRITE);
                    io.flush();
                }
            }
            sent += b.limit();
        }
        while (!io.flush()) {
            wait.await(SelectionKey.OP_WRITE);
        }
        cpu[slot + 1] = MX.getCurrentThreadCpuTime();
    }

    static void read(Io io, SocketChannel ch, long total, long warm, long[] cpu, int slot) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(BUF);
        TlsChannel.Waiter wait = waiter(ch);
        long got = 0;
        boolean started = false;
        while (got < total) {
            if (!started && got >= warm) {
                started = true;
                cpu[slot] = MX.getCurrentThreadCpuTime();
            }
            int n = io.read(b);
            if (n < 0) {
                throw new IOException("ended early after " + got);
            }
            got += n;
            // the transport parses what arrived and compacts; here it is dropped
            b.clear();
            if (n == 0 && !io.buffered()) {
                wait.await(SelectionKey.OP_READ);
            }
        }
        cpu[slot + 1] = MX.getCurrentThreadCpuTime();
    }

    static TlsChannel.Waiter waiter(SocketChannel ch) throws IOException {
        Selector sel = Selector.open();
        SelectionKey key = ch.register(sel, 0);
        return op -> {
            key.interestOps(op);
            sel.select(1000);
            sel.selectedKeys().clear();
        };
    }

    static Io io(TlsChannel t) {
        return new Io() {
            public int read(ByteBuffer b) throws IOException {
                return t.read(b);
            }

            public int write(ByteBuffer b) throws IOException {
                return t.write(b);
            }

            public boolean flush() throws IOException {
                return t.flush();
            }

            public boolean buffered() {
                return t.hasBufferedInput();
            }
        };
    }

    static Io io(SocketChannel ch) {
        return new Io() {
            public int read(ByteBuffer b) throws IOException {
                return ch.read(b);
            }

            public int write(ByteBuffer b) throws IOException {
                return ch.write(b);
            }

            public boolean flush() {
                return true;
            }

            public boolean buffered() {
                return false;
            }
        };
    }
}
