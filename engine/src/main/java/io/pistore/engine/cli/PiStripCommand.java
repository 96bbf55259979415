package io.pistore.engine.cli;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore pi strip}: verifies an interleaved file and writes its data without the metadata. */
@Command(name = "strip", sortOptions = false,
        description = {"Verifies IN (interleaved) and writes its data without the metadata to OUT.",
            "",
            "Checks every block as verify does (same output) and writes the DATA bytes of each block to OUT. "
                + "When a block is bad, OUT is not written (exit 1) unless --force.",
            ""})
final class PiStripCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    PiFormatOptions fmt;

    @Mixin
    PiCheckOptions chk;

    @Option(names = "--force", description = "Write OUT even when blocks are bad (still reported, still exit 1).")
    boolean force;

    @Parameters(index = "0", paramLabel = "IN", description = "Interleaved blocks: DATA then META bytes each.")
    Path in;

    @Parameters(index = "1", paramLabel = "OUT", description = "Data only; written only when every block passes, or with --force.")
    Path out;

    @Override
    public Integer call() throws IOException {
        BlockFormat f = fmt.format();
        PiContext ctx = PiGenerateCommand.build(fmt.context(f).checks(chk.checks).appMask(chk.appMask));
        // The copy itself checks nothing: the verify above it decides.
        PiContext copy = ctx.toBuilder().checks(CheckFlags.NONE).build();
        PrintWriter stdout = spec.commandLine().getOut();
        BadBlockReport report = new BadBlockReport(stdout, chk.maxLines(), f, chk.checks);
        int bs = f.blockSize();
        int ds = f.dataSize();
        int n = fmt.blocksPerChunk(bs);
        long done = 0;
        boolean written;
        try (FileChannel inCh = BlockFiles.openInput(in)) {
            long size = BlockFiles.regularSize(in);
            BlockFiles.requireWholeBlocks(in, size, bs);
            ByteBuffer blocks = ByteBuffer.allocate(n * bs);
            ByteBuffer data = ByteBuffer.allocate(n * ds);
            try (OutputFile o = OutputFile.create(out);
                 Progress progress = new Progress(spec.commandLine().getErr(), "pi strip", size)) {
                for (;;) {
                    blocks.clear();
                    int got = BlockFiles.readFully(inCh, blocks);
                    if (got == 0) {
                        break;
                    }
                    if (got % bs != 0) {
                        throw CliException.usage(in + ": ends with a partial block (" + (done * bs + got)
                                + " bytes is not a whole number of " + bs + "-byte blocks)");
                    }
                    int k = got / bs;
                    blocks.flip();
                    ScatterList list = ScatterList.of(blocks);
                    List<PiError> errors = Pi.verifyAll(ctx.advancedBy(done), list, k, k);
                    report.add(done, errors);
                    if (report.bad() == 0 || force) {
                        data.clear().limit(k * ds);
                        Pi.strip(copy, list, ScatterList.of(data), k);
                        BlockFiles.writeFully(o.channel(), data);
                    }
                    done += k;
                    progress.advance(got);
                    if (got < blocks.capacity()) {
                        break;
                    }
                }
                written = report.bad() == 0 || force;
                if (written) {
                    o.commit();
                }
            }
        }
        stdout.println(report.summary(done));
        if (!written) {
            spec.commandLine().getErr().println(spec.qualifiedName() + ": " + report.bad() + " bad "
                    + (report.bad() == 1 ? "block" : "blocks") + ", " + out
                    + " not written (--force strips anyway)");
            return ExitCodes.BAD_BLOCKS;
        }
        if (report.bad() > 0) {
            spec.commandLine().getErr().println(spec.qualifiedName() + ": wrote " + out + " with " + report.bad()
                    + " bad " + (report.bad() == 1 ? "block" : "blocks") + " (--force)");
            return ExitCodes.BAD_BLOCKS;
        }
        return ExitCodes.OK;
    }
}
