package io.pistore.app.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --config FILE}: a properties file whose keys are the long option names without dashes
 * ({@code transport=tcp}, {@code data=/srv/pistore}, {@code listen=127.0.0.1:4430}, {@code qd=32}).
 * A flag on the command line wins over the file; the file wins over the built-in default.
 * {@link Main} reads the file before parsing (see {@code Main.commandLine}).
 */
final class ConfigOption {
    @Option(names = "--config", paramLabel = "FILE",
            description = "Properties file with defaults for these options (keys: option names without '--').")
    Path file;
}
