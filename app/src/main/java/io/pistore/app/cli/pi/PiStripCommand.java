package io.pistore.app.cli.pi;

import io.pistore.engine.scrub.BadBlockReport;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.QuietOption;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
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
    QuietOption quiet;

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

    private BlockFormat f;
    private PiContext ctx;
    private PiContext copy;
    private BadBlockReport report;

    @Override
    public Integer call() throws IOException {
        f = fmt.formatWithMetadata("remove");
        ctx = PiGenerateCommand.build(fmt.context(f).checks(chk.checks).appMask(chk.appMask));
        // The copy itself checks nothing: the verify before it decides.
        copy = ctx.toBuilder().checks(CheckFlags.NONE).build();
        PrintWriter err = spec.commandLine().getErr();
        // OUT a device or a pipe (say /dev/stdout): the report goes to stderr, and since a stream
        // cannot be taken back, the whole input is verified before the first byte goes out.
        boolean stream = OutputFile.isStream(out);
        PrintWriter stdout = stream ? err : spec.commandLine().getOut();
        report = new BadBlockReport(stdout, chk.maxLines(), f, chk.checks);
        long blocks;
        boolean written;
        try (FileChannel inCh = BlockFiles.openInput(in)) {
            long size = BlockFiles.regularSize(in);
            BlockFiles.requireWholeBlocks(in, size, f.blockSize());
            if (stream && !force) {
                if (size < 0) {
                    throw CliException.usage(in + ": not a regular file; stripping into the device or pipe " + out
                            + " verifies all of IN first and so needs a regular file (or --force)");
                }
                blocks = pass(inCh, size, null, true);
                written = report.bad() == 0;
                if (written) {
                    inCh.position(0);
                    try (OutputFile o = OutputFile.create(out)) {
                        pass(inCh, size, o, false);
                        o.commit();
                    }
                }
            } else {
                try (OutputFile o = OutputFile.create(out)) {
                    blocks = pass(inCh, size, o, true);
                    written = report.bad() == 0 || force;
                    if (written) {
                        o.commit();
                    }
                }
            }
        }
        stdout.println(report.summary(blocks));
        String bad = report.bad() + " bad " + (report.bad() == 1 ? "block" : "blocks");
        if (!written) {
            err.println(spec.qualifiedName() + ": " + bad + ", " + out + " not written (--force strips anyway)");
            return ExitCodes.BAD_BLOCKS;
        }
        if (report.bad() > 0) {
            err.println(spec.qualifiedName() + ": wrote " + out + " with " + bad + " (--force)");
            return ExitCodes.BAD_BLOCKS;
        }
        return ExitCodes.OK;
    }

    /**
     * One pass over IN: with {@code check}, verifies and reports; with an output, writes the data of
     * each chunk as long as no block was bad (or with --force). Returns the blocks read.
     */
    private long pass(FileChannel inCh, long size, OutputFile o, boolean check) throws IOException {
        int bs = f.blockSize();
        int ds = f.dataSize();
        int n = fmt.blocksPerChunk(bs);
        ByteBuffer blocks = ByteBuffer.allocate(n * bs);
        ByteBuffer data = o == null ? null : ByteBuffer.allocate(n * ds);
        try (Progress progress = quiet.progress(spec.commandLine().getErr(), "pi strip", size)) {
            return BlockFiles.readBlocks(inCh, in, blocks, bs, progress, (buf, k, first) -> {
                ScatterList list = ScatterList.of(buf);
                if (check) {
                    report.add(first, Pi.verifyAll(ctx.advancedBy(first), list, k, k));
                }
                if (o != null && (report.bad() == 0 || force)) {
                    data.clear().limit(k * ds);
                    Pi.strip(copy, list, ScatterList.of(data), k);
                    BlockFiles.writeFully(o.channel(), data);
                }
            });
        }
    }
}
