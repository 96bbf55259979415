package io.pistore.app.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --data DIR}: a target's volume directory. */
final class DataDirOption {
    static final String DEFAULT = "pistore-data";

    @Option(names = "--data", paramLabel = "DIR", defaultValue = DEFAULT,
            description = "Directory of the volumes (default: ${DEFAULT-VALUE}; config key: data).")
    Path dir;
}
