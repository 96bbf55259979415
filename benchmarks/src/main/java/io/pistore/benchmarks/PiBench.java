package io.pistore.benchmarks;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code Pi.generate} and {@code Pi.verify} (all checks) of interleaved blocks holding 1 MiB of data
 * (2048 blocks of 512+8, 256 blocks of 4096+8 or 4096+16), in GB/s of data bytes (the metadata, 1.6 %
 * resp. 0.2 % / 0.4 % more bytes, is not counted). Format {@code DATA+META:guard}, Type 1, PI first.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PiBench {
    @Param({"512+8:crc16", "4096+8:crc16", "4096+16:crc64", "4096+16:crc32c"})
    public String format;

    @Param({"heap", "direct"})
    public String memory;

    private PiContext ctx;
    private ScatterList blocks;
    private long nblocks;

    @Setup
    public void setup() {
        String[] fg = format.split(":");
        int[] dm = BlockFormat.parseSizes(fg[0]);
        BlockFormat f = BlockFormat.of(dm[0], dm[1], GuardType.parse(fg[1]), PiType.TYPE_1, PiLocation.FIRST);
        ctx = PiContext.builder(f).checks(CheckFlags.ALL).initialRefTag(1234).appTag(0x5A5A).build();
        nblocks = Bench.BYTES / f.dataSize();
        ByteBuffer b = Bench.randomBuffer(memory, (int) nblocks * f.blockSize(), 7);
        blocks = ScatterList.of(b);
        Pi.generate(ctx, blocks, nblocks);
        if (Pi.verify(ctx, blocks, nblocks) != null) {
            throw new IllegalStateException("generated PI does not verify");
        }
    }

    @Benchmark
    @OperationsPerInvocation(Bench.BYTES)
    public void generate() {
        Pi.generate(ctx, blocks, nblocks);
    }

    @Benchmark
    @OperationsPerInvocation(Bench.BYTES)
    public PiError verify() {
        return Pi.verify(ctx, blocks, nblocks);
    }
}
