package io.pistore.benchmarks.tcp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Locale;

/**
 * The ceiling over large transfers: one loopback TCP connection streaming {@code GiB} gibibytes
 * from one thread to another in writes and reads of {@code chunk} bytes (direct buffers, blocking
 * sockets), for comparison with the tcp transport's 128 KiB sequential figures. Not a test; run with
 * {@code java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" io.pistore.benchmarks.tcp.LoopbackStream [chunk] [GiB]}.
 */
public final class LoopbackStream {
    public static void main(String[] args) throws Exception {
        int chunk = args.length > 0 ? Integer.parseInt(args[0]) : 256 * 1024;
        long total = (args.length > 1 ? Long.parseLong(args[1]) : 4) << 30;
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            long[] received = new long[1];
            Thread reader = new Thread(() -> {
                try (SocketChannel c = server.accept()) {
                    ByteBuffer b = ByteBuffer.allocateDirect(chunk);
                    while (received[0] < total) {
                        b.clear();
                        int r = c.read(b);
                        if (r < 0) {
                            break;
                        }
                        received[0] += r;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "loopback-stream-reader");
            reader.start();
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress())) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer b = ByteBuffer.allocateDirect(chunk);
                long start = System.nanoTime();
                long sent = 0;
                while (sent < total) {
                    b.clear();
                    sent += c.write(b);
                }
                reader.join();
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "loopback stream, %d B chunks: %.2f GB/s (%d bytes in %.2f s)%n",
                        chunk, received[0] / seconds / 1e9, received[0], seconds);
            }
        }
    }
}
