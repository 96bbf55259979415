package io.pistore.benchmarks.nativeguard;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardPath;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.internal.Crc16T10Dif;
import io.pistore.integrity.internal.Crc32cGuard;
import io.pistore.integrity.internal.Crc64Nvme;
import io.pistore.integrity.internal.GuardAlgorithm;
import io.pistore.integrity.internal.NativeGuards;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Native vs pure-Java guard kernels, side by side in one JVM, over 1 MiB of data cut
 * into blocks: {@code guards} is the kernel call Pi makes per run of up to 64 blocks
 * ({@code GuardAlgorithm.updateBlocks}); {@code generate} and {@code verify} are whole
 * {@code Pi} operations on an interleaved buffer of 1 MiB of data, on the guard path named by
 * {@code path} ({@code PiContext.guardPath}: native and pure Java side by side in one JVM; native
 * generate/verify run one JNI call per run of whole blocks); {@code copy} is a plain copy of a
 * buffer of the same size (the memory-bandwidth yardstick).
 * Time is per 1 MiB of data: GB/s = 1.048576 / (µs/op) * 1000 / 1000.
 * See docs/NATIVE.md for the commands and the figures.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class NativeGuardBench {

    static final int MIB = 1 << 20;

    @State(Scope.Thread)
    public static class Kernels {
        @Param({"crc16", "crc64", "crc32c"})
        public String guard;
        @Param({"native", "java"})
        public String path;
        @Param({"512", "4096"})
        public int blockSize;
        @Param({"direct"})
        public String memory;

        GuardAlgorithm alg;
        ByteBuffer buf;
        long[] out = new long[64];
        int blocks;

        @Setup(Level.Trial)
        public void setUp() {
            GuardAlgorithm java = switch (guard) {
                case "crc16" -> Crc16T10Dif.INSTANCE;
                case "crc64" -> Crc64Nvme.INSTANCE;
                default -> Crc32cGuard.INSTANCE;
            };
            if (path.equals("native")) {
                alg = NativeGuards.nativeVariant(java);
                if (alg == null) {
                    throw new IllegalStateException("no native " + guard + ": " + NativeGuards.describe());
                }
            } else {
                alg = java;
            }
            buf = memory.equals("direct") ? ByteBuffer.allocateDirect(MIB) : ByteBuffer.allocate(MIB);
            byte[] r = new byte[MIB];
            new SplittableRandom(1).nextBytes(r);
            buf.put(r).clear();
            blocks = MIB / blockSize;
        }
    }

    @Benchmark
    public long guards(Kernels k) {
        long acc = 0;
        for (int b = 0; b < k.blocks; b += 64) {
            int n = Math.min(64, k.blocks - b);
            k.alg.updateBlocks(k.buf, b * k.blockSize, k.blockSize, k.blockSize, n, 0, k.out);
            acc ^= k.out[n - 1];
        }
        return acc;
    }

    @State(Scope.Thread)
    public static class PiState {
        @Param({"512+8", "4096+8", "4096+16"})
        public String format;
        @Param({"direct", "heap"})
        public String memory;
        @Param({"native", "java"})
        public String path;

        PiContext ctx;
        ScatterList list;
        long nblocks;

        @Setup(Level.Trial)
        public void setUp() {
            BlockFormat f = BlockFormat.parse(format);
            nblocks = MIB / f.dataSize();
            int len = (int) (nblocks * (f.dataSize() + f.metadataSize()));
            ByteBuffer b = memory.equals("direct") ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
            byte[] r = new byte[len];
            new SplittableRandom(2).nextBytes(r);
            b.put(r).clear();
            ctx = PiContext.builder(f).initialRefTag(1)
                    .guardPath(path.equals("native") ? GuardPath.Use.NATIVE : GuardPath.Use.JAVA).build();
            list = ScatterList.of(b);
            Pi.generate(ctx, list, nblocks);
            System.out.println("[pistore] " + NativeGuards.describe() + " format " + format + " guard "
                    + f.guard().cliName() + " path " + path);
        }
    }

    @Benchmark
    public ScatterList generate(PiState s) {
        Pi.generate(s.ctx, s.list, s.nblocks);
        return s.list;
    }

    @Benchmark
    public PiError verify(PiState s) {
        return Pi.verify(s.ctx, s.list, s.nblocks);
    }

    @State(Scope.Thread)
    public static class CopyState {
        @Param({"direct", "heap"})
        public String memory;

        ByteBuffer src;
        ByteBuffer dst;

        @Setup(Level.Trial)
        public void setUp() {
            int len = MIB + MIB / 512 * 8; // the 512+8 interleaved size, the largest of the formats
            src = memory.equals("direct") ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
            dst = memory.equals("direct") ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
        }
    }

    /** A plain copy of the (512+8) buffer: what moving the bytes once costs. */
    @Benchmark
    public ByteBuffer copy(CopyState c) {
        c.dst.clear();
        c.dst.put(0, c.src, 0, c.src.capacity());
        return c.dst;
    }
}
