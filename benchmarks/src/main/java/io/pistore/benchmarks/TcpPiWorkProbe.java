package io.pistore.benchmarks;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Protection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What PI adds to a tcp request in <b>work</b>, not in IOPS: bytes allocated and CPU time per
 * request, per thread, for 4 KiB random writes (or reads) at qd 32 on one queue, PI insert on a
 * 4096+8 volume against no PI on a 4096+0 volume, as {@code pistore bench --pi insert,off} pairs
 * them. Each round runs a fixed number of requests in each mode (ABBA order) and reads every
 * thread's allocation counter and CPU time before and after, so the figures count what the
 * requests did, whatever else the machine ran meanwhile. The I/O threads do not poll between
 * events ({@code tcp.spinMicros=0}, {@code tcp.pollMicros=0}): their CPU is work, not waiting.
 * Not a test; run from the repository root after
 * {@code mvn -B -q -o -DskipTests -pl benchmarks -am package}:
 *
 * <pre>java -cp "benchmarks/target/classes:benchmarks/target/lib/*" io.pistore.benchmarks.TcpPiWorkProbe [ROUNDS] [REQUESTS] [write|read]</pre>
 */
public final class TcpPiWorkProbe {
    static final long BLOCKS = 16384;
    static final int QD = 32;
    /** While set, requests go to LBAs 0, 1, 2, … in turn (the fill before the rounds), else at random. */
    static volatile boolean fill;

    private TcpPiWorkProbe() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int requests = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        boolean write = args.length <= 2 || !args[2].equals("read");
        // a fourth argument, insert or off, runs that mode only (for a profiler attached meanwhile)
        String only = args.length > 3 ? args[3] : "";
        BlockTransportProvider p = BlockTransportProvider.all().stream().filter(x -> x.name().equals("tcp"))
                .findFirst().orElseThrow();
        TreeMap<String, String> o = new TreeMap<>();
        o.put("tcp.spinMicros", "0");
        o.put("tcp.pollMicros", "0");
        o.put("tcp.ioThreads", "2"); // host and target connections on threads of their own
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (VolumeStore store = VolumeStore.inMemory(); BlockTransport t = p.create(TransportOptions.of(o))) {
            store.create("pi", BlockFormat.of(4096, 8), BLOCKS);
            store.create("nopi", BlockFormat.of(4096, 0), BLOCKS);
            try (TargetListener l = t.listen("127.0.0.1:0", new TargetService(store));
                 HostConnection c = t.connect(l.address(), new ConnectOptions(1, QD))) {
                HostQueue q = c.queue(0);
                // write every block of both volumes (reads then find written blocks in both modes), and
                // warm the JIT
                fill = true;
                run(q, true, true, (int) BLOCKS);
                run(q, true, false, (int) BLOCKS);
                fill = false;
                for (int i = 0; i < 3; i++) {
                    run(q, write, true, requests / 2);
                    run(q, write, false, requests / 2);
                }
                List<double[]> ins = new ArrayList<>();
                List<double[]> off = new ArrayList<>();
                System.out.printf(Locale.ROOT, "%s 4k qd%d, %d requests per mode and round; per request:%n",
                        write ? "randwrite" : "randread", QD, requests);
                for (int r = 0; r < rounds; r++) {
                    for (int k = 0; k < 2; k++) {
                        boolean pi = (r % 2 == 0) == (k == 0);
                        if (only.equals(pi ? "off" : "insert")) {
                            continue;
                        }
                        double[] w = measure(mx, q, write, pi, requests);
                        (pi ? ins : off).add(w);
                        System.out.printf(Locale.ROOT, "round %d pi=%-6s alloc %6.0f B (host thread %5.0f, target thread %5.0f, other %5.0f)  cpu %5.2f us (threads %5.2f: host %5.2f, target %5.2f)%n",
                                r + 1, pi ? "insert" : "off", w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
                    }
                }
                if (ins.isEmpty() || off.isEmpty()) {
                    return;
                }
                double[] mi = medians(ins);
                double[] mo = medians(off);
                System.out.printf(Locale.ROOT, "medians: insert alloc %.0f B, thread cpu %.2f us (host %.2f, target %.2f);"
                        + " off alloc %.0f B, thread cpu %.2f us (host %.2f, target %.2f)%n", mi[0], mi[5], mi[6], mi[7],
                        mo[0], mo[5], mo[6], mo[7]);
                System.out.printf(Locale.ROOT, "PI adds %.0f B and %.2f us of thread CPU per request (%.1f %%): host %+.2f us,"
                        + " target %+.2f us%n", mi[0] - mo[0], mi[5] - mo[5], 100 * (mi[5] - mo[5]) / mo[5], mi[6] - mo[6],
                        mi[7] - mo[7]);
            }
        }
    }

    private static double[] medians(List<double[]> rows) {
        double[] m = new double[rows.get(0).length];
        for (int i = 0; i < m.length; i++) {
            double[] col = new double[rows.size()];
            for (int j = 0; j < col.length; j++) {
                col[j] = rows.get(j)[i];
            }
            Arrays.sort(col);
            m[i] = col.length % 2 == 1 ? col[col.length / 2] : (col[col.length / 2 - 1] + col[col.length / 2]) / 2;
        }
        return m;
    }

    /**
     * Runs {@code n} requests and returns per request: bytes allocated (all threads), by the host's
     * I/O thread, by the target's, by the others; process CPU µs; CPU µs of the Java threads.
     */
    private static double[] measure(com.sun.management.ThreadMXBean mx, HostQueue q, boolean write, boolean pi, int n)
            throws Exception {
        long[] ids = mx.getAllThreadIds();
        long[] a0 = mx.getThreadAllocatedBytes(ids);
        long[] c0 = mx.getThreadCpuTime(ids);
        long p0 = processCpu();
        Thread[] roles = run(q, write, pi, n);
        long p1 = processCpu();
        long[] a1 = mx.getThreadAllocatedBytes(ids);
        long[] c1 = mx.getThreadCpuTime(ids);
        double all = 0;
        double host = 0;
        double target = 0;
        double cpu = 0;
        double hostCpu = 0;
        double targetCpu = 0;
        for (int i = 0; i < ids.length; i++) {
            if (a0[i] < 0 || a1[i] < 0) {
                continue;
            }
            long d = a1[i] - a0[i];
            long dc = c0[i] >= 0 && c1[i] >= 0 ? c1[i] - c0[i] : 0;
            all += d;
            cpu += dc;
            if (roles[0] != null && ids[i] == roles[0].getId()) {
                host += d;
                hostCpu += dc;
            } else if (ioThread(ids[i])) {
                target += d; // the other I/O thread: the target's connection (tcp.ioThreads=2)
                targetCpu += dc;
            }
        }
        return new double[] {all / n, host / n, target / n, (all - host - target) / n, (p1 - p0) / 1e3 / n,
                cpu / 1e3 / n, hostCpu / 1e3 / n, targetCpu / 1e3 / n};
    }

    private static boolean ioThread(long id) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getId() == id) {
                return t.getName().startsWith("pistore-tcp-");
            }
        }
        return false;
    }

    private static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * {@code n} requests at qd 32, each slot resubmitting from its completion (on the host's I/O
     * thread); returns the threads that completed requests (the host's) and that ran the target.
     */
    static Thread[] run(HostQueue q, boolean write, boolean pi, int n) throws InterruptedException {
        AtomicLong left = new AtomicLong(n);
        CountDownLatch done = new CountDownLatch(QD);
        Thread[] roles = new Thread[2];
        for (int s = 0; s < QD; s++) {
            new Slot(q, write, pi, s, left, done, roles).issue();
        }
        done.await();
        return roles;
    }

    private static final class Slot {
        final HostQueue q;
        final boolean write;
        final String volume;
        final boolean pi;
        final SplittableRandom rnd;
        final AtomicLong left;
        final CountDownLatch done;
        final Thread[] roles;
        final ScatterList data;

        Slot(HostQueue q, boolean write, boolean pi, int seed, AtomicLong left, CountDownLatch done, Thread[] roles) {
            this.q = q;
            this.write = write;
            this.pi = pi;
            this.volume = pi ? "pi" : "nopi";
            this.rnd = new SplittableRandom(seed);
            this.left = left;
            this.done = done;
            this.roles = roles;
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            for (int i = 0; i < 4096; i++) {
                b.put(i, (byte) rnd.nextInt());
            }
            this.data = ScatterList.of(b);
        }

        void issue() {
            long ticket = left.getAndDecrement();
            if (ticket <= 0) {
                done.countDown();
                return;
            }
            long lba = fill ? ticket % BLOCKS : rnd.nextLong(BLOCKS);
            Protection p = pi ? Protection.insertStrip(lba) : Protection.NONE;
            BlockRequest r = write ? BlockRequest.write(volume, lba, 1, data, null, p, false)
                    : BlockRequest.read(volume, lba, 1, data, null, p);
            q.submit(r).whenComplete(this::completed);
        }

        void completed(Completion c, Throwable e) {
            if (e != null || !c.isSuccess()) {
                System.err.println("request failed: " + (e != null ? e : c));
            }
            roles[0] = Thread.currentThread();
            issue();
        }
    }
}
