package io.pistore.benchmarks;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The target's per-request path without a transport: {@link TargetService#executeNow} of one 4 KiB
 * read or write at a random LBA of a prefilled in-memory volume, as {@code pistore bench --transport
 * local} sends it: {@code insert} is a 4096+8 volume (Type 1, CRC-16) with PRACT and all checks (the
 * target generates the PI on writes, checks and strips it on reads), {@code off} a 4096+0 volume
 * without PI. The difference between the two is the engine's per-request PI cost; run with {@code
 * -prof gc} to see the bytes allocated per request. Score: ns per request.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TargetPathBench {
    @Param({"insert", "off"})
    public String pi;

    /** Volume size in MiB (the bench's default is 1 GiB: far beyond the caches, as there). */
    @Param({"1024"})
    public int sizeMiB;

    private VolumeStore store;
    private TargetService target;
    private BlockFormat f;
    private long blocks;
    private ScatterList data;
    private final SplittableRandom rnd = new SplittableRandom(7);

    @Setup(Level.Trial)
    public void setup() throws Exception {
        BlockFormat pif = BlockFormat.of(4096, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
        f = "insert".equals(pi) ? pif : BlockFormat.of(4096, 0);
        blocks = (long) sizeMiB * (1 << 20) / f.dataSize();
        store = VolumeStore.inMemory();
        store.create("v", f, blocks);
        target = new TargetService(store);
        // Prefill in 1 MiB writes, so reads check real PI (as the bench's prefill does).
        int per = 256;
        ScatterList fill = ScatterList.of(Bench.randomBuffer("direct", per * f.dataSize(), 3));
        for (long lba = 0; lba < blocks; lba += per) {
            Completion c = target.executeNow(BlockRequest.write("v", lba, per, fill, null, protection(lba), false));
            if (!c.isSuccess()) {
                throw new IllegalStateException("prefill: " + c);
            }
        }
        data = ScatterList.of(Bench.randomBuffer("direct", f.dataSize(), 5));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        store.close();
    }

    private Protection protection(long lba) {
        return Protection.insertStrip(f, lba);
    }

    @Benchmark
    public Completion read() throws Exception {
        long lba = rnd.nextLong(blocks);
        return check(target.executeNow(BlockRequest.read("v", lba, 1, data, null, protection(lba))));
    }

    @Benchmark
    public Completion write() throws Exception {
        long lba = rnd.nextLong(blocks);
        return check(target.executeNow(BlockRequest.write("v", lba, 1, data, null, protection(lba), false)));
    }

    private static Completion check(Completion c) {
        if (!c.isSuccess()) {
            throw new IllegalStateException(c.toString());
        }
        return c;
    }
}
