package io.pistore.benchmarks;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
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
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the TCP transport's PI work costs, on one volume (4096+8, CRC-16, Type 1) so that the
 * engine's metadata handling is the same in both modes: <b>insert</b> (PRACT=1, all checks: the
 * host generates on writes and checks on reads, the target checks writes) against <b>carried</b>
 * (PRACT=0, no checks, the application's metadata travels: the same bytes, no PI computed).
 * 4 KiB random reads and writes at qd 32, one queue, requests resubmitted from their completion,
 * interleaved repetitions. Not a test; run from the repository root with
 * {@code java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" io.pistore.benchmarks.TcpPiCostProbe [REPS] [SECONDS]}
 * after {@code mvn -B -q -o -DskipTests -pl benchmarks -am package}.
 */
public final class TcpPiCostProbe {
    static final BlockFormat F = BlockFormat.of(4096, 8);
    static final long BLOCKS = 16384;

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        BlockTransportProvider p = BlockTransportProvider.all().stream().filter(x -> x.name().equals("tcp")).findFirst()
                .orElseThrow();
        try (VolumeStore store = VolumeStore.inMemory(); BlockTransport t = p.create()) {
            store.create("v", F, BLOCKS);
            try (TargetListener l = t.listen("127.0.0.1:0", new TargetService(store));
                 HostConnection c = t.connect(l.address(), new ConnectOptions(1, 32))) {
                run(c.queue(0), true, true, 2); // fill the volume with valid PI, warm up
                run(c.queue(0), false, true, 1);
                for (int r = 0; r < reps; r++) {
                    for (boolean write : new boolean[] {false, true}) {
                        double ins = run(c.queue(0), write, true, seconds);
                        double car = run(c.queue(0), write, false, seconds);
                        System.out.printf(Locale.ROOT, "rand%-5s 4k qd32: insert %8.0f IOPS, carried %8.0f IOPS, PI costs %5.1f %%%n",
                                write ? "write" : "read", ins, car, 100 * (car - ins) / car);
                    }
                }
            }
        }
    }

    /** IOPS of {@code seconds} of qd32 requests of one kind. */
    static double run(HostQueue q, boolean write, boolean insert, int seconds) throws Exception {
        LongAdder ops = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder active = new LongAdder();
        for (int s = 0; s < 32; s++) {
            Slot slot = new Slot(q, write, insert, s, ops, stop, active);
            active.increment();
            slot.issue();
        }
        long t0 = System.nanoTime();
        long ops0 = ops.sum();
        TimeUnit.SECONDS.sleep(seconds);
        long n = ops.sum() - ops0;
        double secs = (System.nanoTime() - t0) / 1e9;
        stop.set(true);
        while (active.sum() > 0) {
            Thread.sleep(1);
        }
        return n / secs;
    }

    private static final class Slot {
        final HostQueue q;
        final boolean write;
        final boolean insert;
        final SplittableRandom rnd;
        final LongAdder ops;
        final AtomicBoolean stop;
        final LongAdder active;
        final ScatterList data = ScatterList.of(ByteBuffer.allocateDirect(4096));
        final ScatterList meta = ScatterList.of(ByteBuffer.allocateDirect(8));
        /** Carried writes store app tag 0xFFFF (the escape), so later checked reads of those blocks pass. */
        final ScatterList escapeMeta = ScatterList.of(ByteBuffer.allocateDirect(8).putShort(2, (short) 0xFFFF));

        Slot(HostQueue q, boolean write, boolean insert, int seed, LongAdder ops, AtomicBoolean stop, LongAdder active) {
            this.q = q;
            this.write = write;
            this.insert = insert;
            this.rnd = new SplittableRandom(seed);
            this.ops = ops;
            this.stop = stop;
            this.active = active;
        }

        void issue() {
            long lba = rnd.nextLong(BLOCKS);
            Protection p = insert ? Protection.insertStrip(lba) : Protection.pass(CheckFlags.NONE, lba, 0, 0);
            BlockRequest r = write ? BlockRequest.write("v", lba, 1, data, insert ? null : escapeMeta, p, false)
                    : BlockRequest.read("v", lba, 1, data, insert ? null : meta, p);
            q.submit(r).whenComplete(this::done);
        }

        void done(Completion c, Throwable e) {
            if (e != null || !c.isSuccess()) {
                System.err.println("request failed: " + (e != null ? e : c)); // counted, and the slot goes on
            }
            ops.increment();
            if (stop.get()) {
                active.decrement();
            } else {
                issue();
            }
        }
    }
}
