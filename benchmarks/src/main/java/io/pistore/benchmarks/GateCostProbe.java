package io.pistore.benchmarks;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * What the gate in front of every served volume (the store's, for live resize and delete) adds
 * to a request, by the measuring thread's CPU time: 4 KiB reads of a memory volume with its
 * metadata, straight and through the gate, and for scale a whole request through the target service
 * (PI checked and stripped; the store's volumes are always gated). The gated volume is a memory
 * volume attached to a store: what the store serves is the gate around it. Prints nanoseconds of CPU
 * per read for each, per round:
 *
 * <pre>java -cp "benchmarks/target/classes:app/target/lib/*" io.pistore.benchmarks.GateCostProbe [ROUNDS]</pre>
 */
public final class GateCostProbe {
    private static long sink;

    private GateCostProbe() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int n = 2_000_000;
        BlockFormat f = BlockFormat.of(4096, 8);
        MemoryVolume bare = new MemoryVolume("v", f, 65536);
        ScatterList data = ScatterList.of(ByteBuffer.allocateDirect(4096));
        ScatterList meta = ScatterList.of(ByteBuffer.allocateDirect(8));
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Consumer<Completion> done = c -> sink++;
        try (VolumeStore gates = VolumeStore.inMemory();
             VolumeStore store = VolumeStore.inMemory()) {
            gates.attach(bare);
            Volume gated = gates.get("v");
            store.create("s", f, 65536);
            TargetService service = new TargetService(store);
            for (int round = 1; round <= rounds; round++) {
                long[] ns = new long[3];
                for (int k = 0; k < 3; k++) {
                    long t0 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        long lba = (i * 7919L) & 65535;
                        if (k == 0) {
                            bare.read(lba, 1, data, meta);
                        } else if (k == 1) {
                            gated.read(lba, 1, data, meta);
                        } else {
                            service.execute(BlockRequest.read("s", lba, 1, data, null, Protection.insertStrip(f, lba)),
                                    PiDuty.of(Protection.insertStrip(f, lba)), done);
                        }
                        data.segment(0).clear();
                        meta.segment(0).clear();
                    }
                    ns[k] = mx.getCurrentThreadCpuTime() - t0;
                }
                System.out.println(String.format(Locale.ROOT,
                        "round %d:  volume %.0f ns  gated volume %.0f ns (gate %+.0f ns)  whole request %.0f ns",
                        round, ns[0] / (double) n, ns[1] / (double) n, (ns[1] - ns[0]) / (double) n,
                        ns[2] / (double) n));
            }
        }
        System.out.println(sink == 42 ? "" : "done");
    }
}
