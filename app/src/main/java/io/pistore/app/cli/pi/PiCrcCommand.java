package io.pistore.app.cli.pi;

import io.pistore.engine.scrub.BadBlockReport;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.PiConverters;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.QuietOption;
import io.pistore.integrity.GuardDigest;
import io.pistore.integrity.GuardType;
import java.io.IOException;
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

/** {@code pistore pi crc}: a guard algorithm over a whole file. */
@Command(name = "crc", sortOptions = false,
        description = {"Prints a guard checksum of a whole file, e.g. 0xd0db.",
            "",
            "Streams FILE through the guard algorithm (seed 0) and prints the value in hex at the guard's width.",
            ""})
final class PiCrcCommand implements Callable<Integer> {
    private static final int CHUNK = 1 << 20;

    @Spec
    CommandSpec spec;

    @Mixin
    QuietOption quiet;

    @Option(names = "--alg", required = true, paramLabel = "ALG", converter = PiConverters.GuardConverter.class,
            description = "crc16 (CRC-16/T10-DIF), crc32c, crc64 (CRC-64/NVME) or ip (IP checksum).")
    GuardType alg;

    @Parameters(index = "0", paramLabel = "FILE", description = "Any file, read to its end (also a pipe such as /dev/stdin).")
    Path file;

    @Override
    public Integer call() throws IOException {
        GuardDigest digest = alg.newDigest();
        try (FileChannel ch = BlockFiles.openInput(file);
             Progress progress = quiet.progress(spec.commandLine().getErr(), "pi crc", BlockFiles.regularSize(file))) {
            ByteBuffer buf = ByteBuffer.allocate(CHUNK);
            for (;;) {
                buf.clear();
                int got = BlockFiles.readFully(ch, buf);
                if (got == 0) {
                    break;
                }
                buf.flip();
                digest.update(buf);
                progress.advance(got);
                if (got < buf.capacity()) {
                    break;
                }
            }
        }
        spec.commandLine().getOut().println(BadBlockReport.hex(digest.value(), alg.guardSize() * 2));
        return ExitCodes.OK;
    }
}
