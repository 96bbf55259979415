package io.pistore.benchmarks.tcp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * The floor under qd1 latency: a bare loopback ping-pong of {@code size} bytes each way between two
 * threads, once with both sides blocking in read() and once with both busy-polling non-blocking
 * sockets. Prints p50/p99 round trips. Not a test; run with
 * {@code java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" io.pistore.benchmarks.tcp.LoopbackPingPong [size] [seconds]}.
 */
public final class LoopbackPingPong {
    public static void main(String[] args) throws Exception {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        for (boolean poll : new boolean[] {false, true}) {
            System.out.println(run(size, seconds, poll));
        }
    }

    static String run(int size, int seconds, boolean poll) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel peer = server.accept();
            for (SocketChannel c : new SocketChannel[] {client, peer}) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                c.configureBlocking(!poll);
            }
            Thread echo = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                try {
                    while (true) {
                        b.clear();
                        while (b.hasRemaining()) {
                            if (peer.read(b) < 0) {
                                return;
                            }
                        }
                        b.flip();
                        while (b.hasRemaining()) {
                            peer.write(b);
                        }
                    }
                } catch (Exception e) {
                    // closed
                }
            });
            echo.setDaemon(true);
            echo.start();
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            long[] lat = new long[10_000_000];
            int n = 0;
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long warm = System.nanoTime() + 500_000_000L;
            while (System.nanoTime() < end && n < lat.length) {
                long t0 = System.nanoTime();
                b.clear();
                while (b.hasRemaining()) {
                    client.write(b);
                }
                b.clear();
                while (b.hasRemaining()) {
                    client.read(b);
                }
                if (t0 > warm) {
                    lat[n++] = System.nanoTime() - t0;
                }
            }
            client.close();
            peer.close();
            long[] l = Arrays.copyOf(lat, n);
            Arrays.sort(l);
            return String.format(Locale.ROOT, "loopback ping-pong %d B %s: round trips=%d p50=%.1f us p99=%.1f us",
                    size, poll ? "busy-poll" : "blocking", n, l[n / 2] / 1e3, l[(int) (n * 0.99)] / 1e3);
        }
    }
}
