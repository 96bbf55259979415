package io.pistore.app.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code pistore version}: what {@code pistore --version} prints, for users who type it as a word. */
@Command(name = "version", description = "Prints the version and which guard path PI takes here (as --version).")
final class VersionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.root().commandLine().printVersionHelp(spec.commandLine().getOut());
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
