package io.pistore.benchmarks;

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
 * The ceiling: a plain copy of the same 1 MiB into another buffer of the same kind, in GB/s
 * (score = bytes/ns). {@code heap} uses {@code System.arraycopy}, {@code direct} {@code ByteBuffer.put}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CopyBench {
    @Param({"heap", "direct"})
    public String memory;

    private ByteBuffer src;
    private ByteBuffer dst;

    @Setup
    public void setup() {
        src = Bench.randomBuffer(memory, Bench.BYTES, 1);
        dst = Bench.randomBuffer(memory, Bench.BYTES, 2);
    }

    @Benchmark
    @OperationsPerInvocation(Bench.BYTES)
    public ByteBuffer copy() {
        if (src.hasArray()) {
            System.arraycopy(src.array(), 0, dst.array(), 0, Bench.BYTES);
        } else {
            dst.put(0, src, 0, Bench.BYTES);
        }
        return dst;
    }
}
