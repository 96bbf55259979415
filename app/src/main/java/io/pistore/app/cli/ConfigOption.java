package io.pistore.app.cli;

import java.nio.file.Path;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * {@code --config FILE}: a properties file whose keys are the long option names without dashes
 * ({@code transport=tcp}, {@code data=/srv/pistore}, {@code listen=127.0.0.1:4430}, {@code qd=32})
 * and transport settings by their names ({@code tcp.ioThreads=4}, see
 * {@link TransportOptionsOption}). A flag on the command line wins over the file; the file wins
 * over the built-in default. {@link Main} reads the file before parsing (see
 * {@code Main.commandLine}) and warns about keys that match no option of the command
 * ({@link ConfigKeyWarnings}).
 */
public final class ConfigOption {
    @Option(names = "--config", paramLabel = "FILE",
            description = "Properties file with defaults for these options (keys: option names without '--', "
                    + "and transport settings such as tcp.ioThreads; other keys are ignored with a warning).")
    Path file;

    /** The file's properties, or null without {@code --config}. */
    Properties load() {
        return file == null ? null : Main.readConfig(file.toString());
    }
}
