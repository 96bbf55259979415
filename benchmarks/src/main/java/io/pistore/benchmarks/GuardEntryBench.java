package io.pistore.benchmarks;

import io.pistore.integrity.GuardType;
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
 * One guard update the size a transport makes per chunk (a 4 KiB block, or part of one), in ns per
 * call, over a direct buffer at an offset: what the call costs around the CRC itself. The
 * library's bound algorithm (native when loaded; {@code -Dpistore.native=false} for pure Java).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class GuardEntryBench {
    @Param({"crc16"})
    public String guard;

    @Param({"256", "4096"})
    public int len;

    private GuardType type;
    private ByteBuffer view;

    @Setup
    public void setup() {
        type = GuardType.parse(guard);
        ByteBuffer buf = Bench.randomBuffer("direct", 8192, 42);
        view = buf.duplicate().position(64).limit(64 + len);
    }

    @Benchmark
    public long update() {
        return type.compute(view);
    }
}
