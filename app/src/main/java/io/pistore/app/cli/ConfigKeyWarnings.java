package io.pistore.app.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;

/**
 * Warns, one stderr line per key, about {@code --config} keys that match no option of the command
 * being run: a misspelt key ({@code qdepth=32}) would otherwise be ignored without a word. Keys with
 * a dot are transport settings ({@link TransportOptionsOption}), checked by the transports instead.
 */
final class ConfigKeyWarnings {
    private ConfigKeyWarnings() {
    }

    /** Writes the warnings for the command {@code parsed} runs (its last subcommand) to its stderr. */
    static void warn(Properties config, ParseResult parsed) {
        List<CommandLine> chain = parsed.asCommandLineList();
        CommandLine command = chain.get(chain.size() - 1);
        CommandSpec spec = command.getCommandSpec();
        PrintWriter err = command.getErr();
        for (String key : new TreeSet<>(config.stringPropertyNames())) {
            if (!key.contains(".") && spec.findOption("--" + key) == null) {
                err.println(spec.qualifiedName() + ": warning: config key '" + key
                        + "' matches no option of this command; ignored");
            }
        }
        err.flush();
    }
}
