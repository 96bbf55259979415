package io.pistore.benchmarks.tcp;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Protection;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.internal.TcpTransport;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * 4 KiB qd1 PI-insert reads over tcp in one JVM, resubmitting from the completion (as the bench
 * does), with the I/O threads' waiting counters and CPU time: how the adaptive polling behaves.
 * Not a test; run with
 * {@code java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" io.pistore.benchmarks.tcp.LatencyProbe SECONDS SPIN_US POLL_US}.
 */
public final class LatencyProbe {
    private static final String VOLUME = "v";

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        TcpConfig cfg = TcpConfig.defaults();
        if (args.length > 2) {
            cfg.spinMicros = Long.parseLong(args[1]);
            cfg.pollMicros = Long.parseLong(args[2]);
        }
        BlockFormat f = BlockFormat.of(4096, 8);
        TcpTransport t = new TcpTransport(cfg);
        VolumeStore store = VolumeStore.inMemory();
        store.create(VOLUME, f, 1024);
        TargetListener l = t.listen("127.0.0.1:0", new TargetService(store));
        HostConnection c = t.connect(l.address(), new ConnectOptions(1, 1));
        HostQueue q = c.queue(0);
        ScatterList buf = ScatterList.wrap(new byte[4096]);
        Completion w = q.submit(BlockRequest.write(VOLUME, 7, 1, buf, null, Protection.insertStrip(7), false))
                .get(10, TimeUnit.SECONDS);
        if (!w.isSuccess()) {
            throw new IllegalStateException(w.toString());
        }
        long[] lat = new long[20_000_000];
        int[] n = {0};
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds + 1);
        long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        CountDownLatch done = new CountDownLatch(1);
        long[] counters0 = new long[3];
        long[] cpu0 = new long[1];
        Runnable[] issue = new Runnable[1];
        issue[0] = () -> {
            long t0 = System.nanoTime();
            CompletableFuture<Completion> fu = q.submit(BlockRequest.read(VOLUME, 7, 1, buf, null,
                    Protection.insertStrip(7)));
            fu.whenComplete((res, e) -> {
                long now = System.nanoTime();
                if (now > warm) {
                    if (n[0] == 0) {
                        System.arraycopy(t.waitCounters(), 0, counters0, 0, 3);
                        cpu0[0] = ioCpu();
                    }
                    if (n[0] < lat.length) {
                        lat[n[0]++] = now - t0;
                    }
                }
                if (now < end && res.isSuccess()) {
                    issue[0].run();
                } else {
                    done.countDown();
                }
            });
        };
        issue[0].run();
        done.await();
        long[] c1 = t.waitCounters();
        long cpu = ioCpu() - cpu0[0];
        long[] s = Arrays.copyOf(lat, n[0]);
        Arrays.sort(s);
        System.out.printf(Locale.ROOT, "spin=%dus poll=%dus: ios=%d p50=%.1fus p99=%.1fus | polled=%d blocked=%d contended=%d"
                        + " | io-thread cpu=%.2fs in %ds%n", cfg.spinMicros, cfg.pollMicros, s.length,
                s[s.length / 2] / 1e3, s[(int) (s.length * 0.99)] / 1e3, c1[0] - counters0[0], c1[1] - counters0[1],
                c1[2] - counters0[2], cpu / 1e9, seconds);
        c.close();
        l.close();
        t.close();
        store.close();
    }

    private static long ioCpu() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread th : Thread.getAllStackTraces().keySet()) {
            if (th.getName().startsWith("pistore-tcp-")) {
                sum += Math.max(0, mx.getThreadCpuTime(th.getId()));
            }
        }
        return sum;
    }
}
