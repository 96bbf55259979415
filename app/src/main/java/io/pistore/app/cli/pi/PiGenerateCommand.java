package io.pistore.app.cli.pi;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.QuietOption;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore pi generate}: raw data in, interleaved blocks (or separate metadata) out. */
@Command(name = "generate", sortOptions = false,
        description = {"Adds PI to raw data: IN (data only) to OUT (interleaved, or metadata only).",
            "",
            "IN is a whole number of DATA-byte blocks. OUT gets each block's DATA bytes, then its META bytes of "
                + "metadata: zero apart from the PI tuple. With --separate, OUT gets only the META bytes of each block.",
            ""})
final class PiGenerateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    QuietOption quiet;

    @Mixin
    PiFormatOptions fmt;

    @Option(names = "--separate", description = "Write only the metadata (META bytes per block) to OUT.")
    boolean separate;

    @Parameters(index = "0", paramLabel = "IN", description = "Raw data: a whole number of DATA-byte blocks.")
    Path in;

    @Parameters(index = "1", paramLabel = "OUT", description = "Output file (replaced only when the run succeeds).")
    Path out;

    @Override
    public Integer call() throws IOException {
        BlockFormat f = fmt.format();
        PiContext ctx = build(fmt.context(f));
        int ds = f.dataSize();
        int outUnit = separate ? f.metadataSize() : f.blockSize();
        int n = fmt.blocksPerChunk(f.blockSize());
        long done;
        try (FileChannel inCh = BlockFiles.openInput(in)) {
            long size = BlockFiles.regularSize(in);
            BlockFiles.requireWholeBlocks(in, size, ds);
            ByteBuffer data = ByteBuffer.allocate(n * ds);
            ByteBuffer result = ByteBuffer.allocate(n * outUnit);
            try (OutputFile o = OutputFile.create(out);
                 Progress progress = quiet.progress(spec.commandLine().getErr(), "pi generate", size)) {
                done = BlockFiles.readBlocks(inCh, in, data, ds, progress, (buf, k, first) -> {
                    result.clear().limit(k * outUnit);
                    PiContext c = ctx.advancedBy(first);
                    if (separate) {
                        Arrays.fill(result.array(), 0, k * outUnit, (byte) 0);
                        Pi.generate(c, ScatterList.of(buf), ScatterList.of(result), k);
                    } else {
                        Pi.insert(c, ScatterList.of(buf), ScatterList.of(result), k);
                    }
                    BlockFiles.writeFully(o.channel(), result);
                });
                o.commit();
            }
        }
        // With OUT a stream (say /dev/stdout), the summary goes to stderr to keep that stream clean.
        PrintWriter report = OutputFile.isStream(out) ? spec.commandLine().getErr() : spec.commandLine().getOut();
        report.println("generated " + done + (done == 1 ? " block (" : " blocks (") + f + ") into "
                + out + (separate ? " (metadata only)" : ""));
        return ExitCodes.OK;
    }

    static PiContext build(PiContext.Builder b) {
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }
}
