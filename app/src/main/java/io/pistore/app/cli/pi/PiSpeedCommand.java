package io.pistore.app.cli.pi;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.PiConverters;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardPath;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pistore pi speed}: what PI costs on this machine, in the spirit of {@code openssl speed}.
 * Generates and verifies PI over an in-memory buffer of 1 MiB of data (interleaved, Type 1, PI
 * first) on each guard path this process has (native, pure Java), one line per path and operation.
 */
@Command(name = "speed", sortOptions = false,
        description = {"Measures PI generate and verify speed in memory, per guard path.",
            "",
            "Runs Pi.generate and Pi.verify over 1 MiB of data (interleaved blocks, Type 1, PI first) for "
                + "--seconds each, after a short warm-up, and prints one line per path and operation, e.g.",
            "  path=native op=generate format=4096+8 guard=crc16 gbps=31.20",
            "GB/s counts data bytes (1 MiB = 1.048576 GB). The native path is the library's kernel for the guard "
                + "(also where it is not the default, e.g. crc32c); 'pistore --version' says which path is the default.",
            ""})
final class PiSpeedCommand implements Callable<Integer> {
    static final int DATA_BYTES = 1 << 20;

    @Spec
    CommandSpec spec;

    @Option(names = "--format", paramLabel = "DATA+META", converter = PiConverters.SizesConverter.class,
            defaultValue = "4096+8", description = "Block layout (default: ${DEFAULT-VALUE}).")
    PiConverters.Sizes sizes;

    @Option(names = "--guard", paramLabel = "GUARD", converter = PiConverters.GuardConverter.class,
            description = "crc16, ip, crc32c or crc64 (default: crc16 for META < 16, crc64 for META >= 16).")
    GuardType guard;

    @Option(names = "--seconds", paramLabel = "N", defaultValue = "1",
            description = "Seconds measured per path and operation, e.g. 0.5 (default: ${DEFAULT-VALUE}).")
    String seconds;

    @Option(names = "--path", paramLabel = "native|java|all", defaultValue = "all",
            description = "Guard path(s) to measure; all measures each available one (default: ${DEFAULT-VALUE}).")
    String path;

    @Option(names = "--memory", paramLabel = "direct|heap", defaultValue = "direct",
            description = "Buffer kind (default: ${DEFAULT-VALUE}).")
    String memory;

    @Override
    public Integer call() {
        double secs = parseSeconds(seconds);
        BlockFormat f = format();
        boolean direct = parseMemory(memory);
        List<GuardPath.Use> uses = paths(f);
        PrintWriter out = spec.commandLine().getOut();
        // which kernel each guard is bound to, and why not native, on stderr: stdout stays one line per figure
        PrintWriter err = spec.commandLine().getErr();
        err.println("pi speed: " + GuardPath.describe());
        err.flush();
        long nblocks = Math.max(1, DATA_BYTES / f.dataSize());
        long dataBytes = nblocks * f.dataSize();
        int len = Math.toIntExact(nblocks * f.blockSize());
        ByteBuffer buf = direct ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
        byte[] fill = new byte[len];
        new SplittableRandom(42).nextBytes(fill);
        buf.put(fill).clear();
        ScatterList list = ScatterList.of(buf);
        for (GuardPath.Use use : uses) {
            PiContext ctx = PiContext.builder(f).initialRefTag(1).appTag(0x5151).guardPath(use).build();
            String name = use.name().toLowerCase(Locale.ROOT);
            double gen = measure(() -> Pi.generate(ctx, list, nblocks), secs, dataBytes);
            print(out, name, "generate", f, gen);
            double ver = measure(() -> {
                PiError e = Pi.verify(ctx, list, nblocks);
                if (e != null) {
                    throw new IllegalStateException("verify of freshly generated PI failed: " + e);
                }
            }, secs, dataBytes);
            print(out, name, "verify", f, ver);
        }
        return ExitCodes.OK;
    }

    private static void print(PrintWriter out, String path, String op, BlockFormat f, double gbps) {
        // two decimals, more below 0.1 GB/s (an unwarmed JIT on a tiny --seconds) so it never reads 0.00
        out.printf(Locale.ROOT, "path=%s op=%s format=%s guard=%s gbps=" + (gbps < 0.1 ? "%.5f" : "%.2f") + "%n",
                path, op, f.sizes(), f.guard().cliName(), gbps);
        out.flush();
    }

    /** GB/s of data: a warm-up of about a third of the time (at most 1 s), then {@code secs} timed. */
    private static double measure(Runnable op, double secs, long dataBytes) {
        long warm = (long) (Math.min(1.0, Math.max(0.02, secs / 3)) * 1e9);
        long t0 = System.nanoTime();
        do {
            op.run();
        } while (System.nanoTime() - t0 < warm);
        long budget = (long) (secs * 1e9);
        long ops = 0;
        long start = System.nanoTime();
        long now;
        do {
            op.run();
            ops++;
            now = System.nanoTime();
        } while (now - start < budget);
        return ops * (double) dataBytes / (now - start);
    }

    private BlockFormat format() {
        int meta = sizes.meta();
        GuardType g = guard != null ? guard : BlockFormat.defaultGuard(meta);
        if (meta == 0) {
            throw CliException.usage("format " + sizes + " has no metadata, so no PI to measure");
        }
        try {
            return BlockFormat.of(sizes.data(), meta, g, PiType.TYPE_1, PiLocation.FIRST);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("format " + sizes + ": " + e.getMessage());
        }
    }

    private List<GuardPath.Use> paths(BlockFormat f) {
        List<GuardPath.Use> uses = new ArrayList<>(2);
        boolean nat = f.guard().hasNativePath();
        switch (path.trim().toLowerCase(Locale.ROOT)) {
            case "native":
                if (!nat) {
                    throw CliException.usage("no native path for guard " + f.guard().cliName() + ": " + why());
                }
                uses.add(GuardPath.Use.NATIVE);
                break;
            case "java":
                uses.add(GuardPath.Use.JAVA);
                break;
            case "all":
                if (nat) {
                    uses.add(GuardPath.Use.NATIVE);
                } else {
                    PrintWriter err = spec.commandLine().getErr();
                    err.println("pi speed: no native path for guard " + f.guard().cliName() + " (" + why()
                            + "); measuring java only");
                    err.flush();
                }
                uses.add(GuardPath.Use.JAVA);
                break;
            default:
                throw CliException.usage("--path must be native, java or all, not '" + path + "'");
        }
        return uses;
    }

    private static String why() {
        Throwable t = GuardPath.unavailabilityCause();
        return t != null ? "native unavailable: " + t.getMessage() : "the native library has no kernel for it";
    }

    private static double parseSeconds(String s) {
        double v;
        try {
            v = Double.parseDouble(s.trim());
        } catch (NumberFormatException e) {
            throw CliException.usage("--seconds must be a number of seconds, not '" + s + "'");
        }
        if (!(v > 0) || v > 3600) {
            throw CliException.usage("--seconds must be more than 0 and at most 3600, not " + s);
        }
        return v;
    }

    private static boolean parseMemory(String m) {
        switch (m.trim().toLowerCase(Locale.ROOT)) {
            case "direct": return true;
            case "heap": return false;
            default: throw CliException.usage("--memory must be direct or heap, not '" + m + "'");
        }
    }
}
