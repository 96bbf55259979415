package io.pistore.app.cli.pi;

import io.pistore.app.cli.Main;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code pistore pi}: the PI file tool. */
@Command(name = "pi", sortOptions = false,
        description = {"Protection Information on files: generate, verify, strip, and guard checksums.",
            "Files stream through in chunks, so any size works in bounded memory.",
            "'pi speed' measures what PI costs in memory on this machine."},
        subcommands = {PiGenerateCommand.class, PiVerifyCommand.class, PiStripCommand.class, PiCrcCommand.class,
            PiSpeedCommand.class})
public final class PiCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.missingSubcommand(spec);
    }
}
