package io.pistore.benchmarks;

import io.pistore.integrity.internal.Crc16T10Dif;
import io.pistore.integrity.internal.Crc32cGuard;
import io.pistore.integrity.internal.Crc64Nvme;
import io.pistore.integrity.internal.GuardAlgorithm;
import io.pistore.integrity.internal.IpChecksum;
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
 * The guard kernels over 1 MiB, in GB/s (score = bytes/ns, see {@link Bench#BYTES}).
 * <ul>
 *   <li>{@code stream}: one {@code update} over the whole 1 MiB;
 *   <li>{@code blocks}: {@code updateBlocks} over the same 1 MiB cut into {@code block}-byte blocks
 *       (what {@code Pi.generate} / {@code Pi.verify} call for a run of whole blocks).
 * </ul>
 * {@code impl=lib} is the library's kernel; any other {@code impl} is the class name of a kernel
 * variant to try ({@code -p impl=com.example.MyCrc16}). To compare with an older kernel, build that
 * commit's integrity jar and name its class.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class GuardBench {
    @Param({"crc16", "ip", "crc32c", "crc64"})
    public String guard;

    @Param({"heap", "direct"})
    public String memory;

    @Param({"lib"})
    public String impl;

    /** Block size for {@link #blocks}. */
    @Param({"4096"})
    public int block;

    private GuardAlgorithm alg;
    private ByteBuffer buf;
    private long[] states;

    @Setup
    public void setup() {
        alg = algorithm(guard, impl);
        buf = Bench.randomBuffer(memory, Bench.BYTES, 42);
        states = new long[Bench.BYTES / block];
    }

    static GuardAlgorithm algorithm(String guard, String impl) {
        if (!impl.equals("lib")) {
            return byName(impl);
        }
        switch (guard) {
            case "crc16": return Crc16T10Dif.INSTANCE;
            case "ip": return IpChecksum.INSTANCE;
            case "crc32c": return Crc32cGuard.INSTANCE;
            case "crc64": return Crc64Nvme.INSTANCE;
            default: throw new IllegalArgumentException("unknown guard " + guard);
        }
    }

    /** Any other {@code impl}: the {@code INSTANCE} of that class (for trying out a kernel variant). */
    private static GuardAlgorithm byName(String className) {
        try {
            return (GuardAlgorithm) Class.forName(className).getField("INSTANCE").get(null);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("impl must be lib or a GuardAlgorithm class with an INSTANCE"
                    + " field, not " + className, e);
        }
    }

    @Benchmark
    @OperationsPerInvocation(Bench.BYTES)
    public long stream() {
        GuardAlgorithm a = alg;
        return a.finish(a.update(a.start(0), buf, 0, Bench.BYTES));
    }

    @Benchmark
    @OperationsPerInvocation(Bench.BYTES)
    public long[] blocks() {
        alg.updateBlocks(buf, 0, block, block, Bench.BYTES / block, 0, states);
        return states;
    }
}
