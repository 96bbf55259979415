package io.pistore.app.cli.pi;

import io.pistore.engine.scrub.BadBlockReport;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.QuietOption;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
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

/** {@code pistore pi verify}: checks the PI of an interleaved file, or of separate data and metadata files. */
@Command(name = "verify", sortOptions = false,
        description = {"Checks the PI of every block: FILE (interleaved), or DATA and META (separate).",
            "",
            "Checks the guard, application tag and reference tag of each block as --checks asks, prints "
                + "'lba=N error=guard|app|ref expected=0x... actual=0x...' for each bad block (expected: from the data "
                + "and the options; actual: stored), then a summary line. Exit 0 when every block passes, 1 when "
                + "any is bad.",
            ""})
final class PiVerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    QuietOption quiet;

    @Mixin
    PiFormatOptions fmt;

    @Mixin
    PiCheckOptions chk;

    @Option(names = "--separate", description = "Data and metadata are two files: DATA META.")
    boolean separate;

    @Parameters(arity = "1..2", paramLabel = "FILE", description = "FILE (interleaved), or DATA META with --separate.")
    List<Path> files;

    @Override
    public Integer call() throws IOException {
        if (!separate && files.size() != 1) {
            throw CliException.usage("expected one FILE (interleaved), or --separate DATA META");
        }
        if (separate && files.size() != 2) {
            throw CliException.usage("--separate needs two files: DATA META");
        }
        BlockFormat f = fmt.formatWithMetadata("check");
        PiContext ctx = PiGenerateCommand.build(fmt.context(f).checks(chk.checks).appMask(chk.appMask));
        BadBlockReport report = new BadBlockReport(spec.commandLine().getOut(), chk.maxLines(), f, chk.checks);
        long blocks = separate ? verifySeparate(f, ctx, report) : verifyInterleaved(f, ctx, report);
        spec.commandLine().getOut().println(report.summary(blocks));
        return report.bad() == 0 ? ExitCodes.OK : ExitCodes.BAD_BLOCKS;
    }

    private long verifyInterleaved(BlockFormat f, PiContext ctx, BadBlockReport report) throws IOException {
        Path file = files.get(0);
        int bs = f.blockSize();
        int n = fmt.blocksPerChunk(bs);
        try (FileChannel ch = BlockFiles.openInput(file)) {
            long size = BlockFiles.regularSize(file);
            BlockFiles.requireWholeBlocks(file, size, bs);
            ByteBuffer buf = ByteBuffer.allocate(n * bs);
            try (Progress progress = quiet.progress(spec.commandLine().getErr(), "pi verify", size)) {
                return BlockFiles.readBlocks(ch, file, buf, bs, progress, (b, k, first) ->
                        report.add(first, Pi.verifyAll(ctx.advancedBy(first), ScatterList.of(b), k, k)));
            }
        }
    }

    private long verifySeparate(BlockFormat f, PiContext ctx, BadBlockReport report) throws IOException {
        Path dataFile = files.get(0);
        Path metaFile = files.get(1);
        int ds = f.dataSize();
        int ms = f.metadataSize();
        int n = fmt.blocksPerChunk(f.blockSize());
        long done = 0;
        try (FileChannel dch = BlockFiles.openInput(dataFile); FileChannel mch = BlockFiles.openInput(metaFile)) {
            long dsize = BlockFiles.regularSize(dataFile);
            long msize = BlockFiles.regularSize(metaFile);
            BlockFiles.requireWholeBlocks(dataFile, dsize, ds);
            if (ms > 0) {
                BlockFiles.requireWholeBlocks(metaFile, msize, ms);
            }
            if (dsize >= 0 && msize >= 0 && (ms == 0 ? msize != 0 : dsize / ds != msize / ms)) {
                throw CliException.usage(mismatch(dataFile, dsize / ds, metaFile, ms == 0 ? -1 : msize / ms));
            }
            ByteBuffer data = ByteBuffer.allocate(n * ds);
            ByteBuffer meta = ByteBuffer.allocate(n * ms);
            try (Progress progress = quiet.progress(spec.commandLine().getErr(), "pi verify", dsize)) {
                for (;;) {
                    data.clear();
                    meta.clear();
                    int gotD = BlockFiles.readFully(dch, data);
                    int gotM = BlockFiles.readFully(mch, meta);
                    if (gotD % ds != 0 || (ms > 0 && gotM % ms != 0)) {
                        throw CliException.usage((gotD % ds != 0 ? dataFile : metaFile) + ": ends with a partial block");
                    }
                    int k = gotD / ds;
                    if (ms > 0 && gotM / ms != k) {
                        throw CliException.usage(mismatch(dataFile, done + k, metaFile, done + gotM / ms)
                                + " (or more)");
                    }
                    if (k == 0) {
                        break;
                    }
                    data.flip();
                    meta.flip();
                    report.add(done, Pi.verifyAll(ctx.advancedBy(done), ScatterList.of(data), ScatterList.of(meta), k, k));
                    done += k;
                    progress.advance(gotD);
                    if (gotD < data.capacity()) {
                        break;
                    }
                }
            }
        }
        return done;
    }

    private static String mismatch(Path data, long dataBlocks, Path meta, long metaBlocks) {
        return metaBlocks < 0
                ? meta + ": the format has no metadata, but the file is not empty"
                : data + " holds " + dataBlocks + " blocks but " + meta + " holds metadata for " + metaBlocks;
    }
}
