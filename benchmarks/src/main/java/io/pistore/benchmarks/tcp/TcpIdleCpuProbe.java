package io.pistore.benchmarks.tcp;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.internal.TcpTransport;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * CPU time of idle tcp I/O threads: 200 writes over two queues (spin 1 ms, poll 2 ms, as the
 * transport's idling test sets them), then the CPU the {@code pistore-tcp-*} threads use while
 * nothing arrives. Exits 1 when they used more than a tenth of the idle time (the threads
 * should block, not poll). Not a test (a CPU-time threshold depends on the machine); run with
 * {@code java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" io.pistore.benchmarks.tcp.TcpIdleCpuProbe [IDLE_MS]}.
 */
public final class TcpIdleCpuProbe {
    private static final String VOLUME = "v";

    private TcpIdleCpuProbe() {
    }

    public static void main(String[] args) throws Exception {
        long idleMs = args.length > 0 ? Long.parseLong(args[0]) : 500;
        TcpConfig cfg = TcpConfig.defaults();
        cfg.spinMicros = 1000;
        cfg.pollMicros = 2000;
        TcpTransport t = new TcpTransport(cfg);
        VolumeStore store = VolumeStore.inMemory();
        store.create(VOLUME, BlockFormat.of(4096, 8), 1024);
        TargetListener l = t.listen("127.0.0.1:0", new TargetService(store));
        HostConnection c = t.connect(l.address(), new ConnectOptions(2, 4));
        ScatterList d = ScatterList.wrap(new byte[4096]);
        for (int i = 0; i < 200; i++) {
            Completion w = c.queue(i & 1).submit(BlockRequest.write(VOLUME, i, 1, d, null, Protection.insertStrip(i),
                    false)).get(10, TimeUnit.SECONDS);
            if (!w.isSuccess()) {
                throw new IllegalStateException(w.toString());
            }
        }
        TimeUnit.MILLISECONDS.sleep(50); // past the last poll budget
        long before = ioCpu();
        TimeUnit.MILLISECONDS.sleep(idleMs);
        long used = ioCpu() - before;
        long limit = TimeUnit.MILLISECONDS.toNanos(idleMs) / 10;
        System.out.printf(Locale.ROOT, "idle tcp I/O threads: %.2f ms of CPU in %d ms idle (limit %.2f ms)%n",
                used / 1e6, idleMs, limit / 1e6);
        c.close();
        l.close();
        t.close();
        store.close();
        System.exit(used < limit ? 0 : 1);
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
