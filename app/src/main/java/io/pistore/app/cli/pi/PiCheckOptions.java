package io.pistore.app.cli.pi;

import io.pistore.app.cli.Numbers;
import io.pistore.app.cli.PiConverters;
import io.pistore.integrity.CheckFlags;
import picocli.CommandLine.Option;

/** What a verify checks and how much it prints. */
final class PiCheckOptions {
    @Option(names = "--checks", paramLabel = "LIST", converter = PiConverters.ChecksConverter.class,
            defaultValue = "guard,app,ref",
            description = "Fields to check, comma-separated: guard, app, ref (also all, none; default: ${DEFAULT-VALUE}). Type 3 never checks ref.")
    CheckFlags checks;

    @Option(names = "--app-mask", paramLabel = "N", converter = Numbers.IntConverter.class, defaultValue = "0xffff",
            description = "Bits of the application tag that are compared (default: ${DEFAULT-VALUE}).")
    int appMask;

    @Option(names = "--max-errors", paramLabel = "N", converter = Numbers.LongConverter.class,
            description = "Print at most N bad-block lines (default: all); the summary still counts every bad block.")
    Long maxErrors;

    long maxLines() {
        return maxErrors == null || maxErrors < 0 ? Long.MAX_VALUE : maxErrors;
    }
}
