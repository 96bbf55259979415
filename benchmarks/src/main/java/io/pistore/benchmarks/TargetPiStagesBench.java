package io.pistore.benchmarks;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Protection;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The stages of the target's per-request PI work, one 4 KiB block of 4096+8 (Type 1, CRC-16), each
 * alone: building the request's PI context, a metadata buffer for the request, the unwritten-block
 * check, the guard alone, verify and generate of one block (direct data; heap or direct metadata), and
 * a memory volume's read of one block with and without its metadata. Score: ns per call; run with
 * {@code -prof gc} for bytes per call.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TargetPiStagesBench {
    /** The metadata buffer's memory: the target used heap buffers, now a direct per-thread buffer. */
    @Param({"heap", "direct"})
    public String metadata;

    private final BlockFormat f = BlockFormat.of(4096, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
    private final Protection p = Protection.insertStrip(1234);
    private PiContext ctx;
    private ScatterList data;
    private ScatterList meta;
    private MemoryVolume vol;
    private long lba;
    private ByteBuffer crcView;

    @Setup
    public void setup() {
        ctx = p.context(f);
        crcView = Bench.randomBuffer("direct", 4096, 3);
        data = ScatterList.of(crcView);
        meta = ScatterList.of("direct".equals(metadata) ? ByteBuffer.allocateDirect(8) : ByteBuffer.allocate(8));
        Pi.generate(ctx, data, meta, 1);
        vol = new MemoryVolume("v", f, 1 << 16);
        for (long b = 0; b < 1 << 16; b++) {
            vol.write(b, 1, data, meta, false);
        }
    }

    @Benchmark
    public PiContext context() {
        return p.context(f);
    }

    @Benchmark
    public ScatterList metadataBuffer() {
        return ScatterList.of(ByteBuffer.allocate(f.metadataSize()));
    }

    @Benchmark
    public int unwrittenCheck() {
        return UnwrittenBlock.checkData(f, data, meta, 1, e -> {
            throw new IllegalStateException(e.toString());
        });
    }

    /** The guard alone: one CRC-16 of the 4096 data bytes (the native path when it is there). */
    @Benchmark
    public long crcOnly() {
        return f.guard().compute(crcView);
    }

    @Benchmark
    public PiError verify() {
        return Pi.verify(ctx, data, meta, 1);
    }

    @Benchmark
    public void generate() {
        Pi.generate(ctx, data, meta, 1);
    }

    @Benchmark
    public void volumeReadWithMetadata() {
        lba = (lba + 7919) & 0xFFFF;
        vol.read(lba, 1, data, meta);
    }

    @Benchmark
    public void volumeReadDataOnly() {
        lba = (lba + 7919) & 0xFFFF;
        vol.read(lba, 1, data, null);
    }
}
