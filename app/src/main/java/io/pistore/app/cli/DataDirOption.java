package io.pistore.app.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --data DIR}: a target's volume directory. */
public final class DataDirOption {
    static final String DEFAULT = "pistore-data";

    @Option(names = "--data", paramLabel = "DIR", defaultValue = DEFAULT,
            description = "Directory of the volumes; every command but 'volume create', which makes it, needs "
                    + "it to exist (default: ${DEFAULT-VALUE}; config key: data).")
    public Path dir;

    /** {@link #dir}, which must be an existing directory. */
    public Path existing() {
        return requireExisting(dir);
    }

    /**
     * {@code dir}, or a usage error when it is not an existing directory: a mistyped {@code --data}
     * would otherwise be created empty and look like a store without volumes. One this process may
     * not enter is a permission problem, said as such.
     */
    public static Path requireExisting(Path dir) {
        if (PermissionProblem.hidden(dir)) {
            throw CliException.usage("--data " + PermissionProblem.describe(dir));
        }
        if (Files.isDirectory(dir) && !PermissionProblem.usable(dir)) {
            throw CliException.usage("--data " + PermissionProblem.describe(dir));
        }
        if (!Files.isDirectory(dir)) {
            throw CliException.usage(Files.exists(dir) ? "--data " + dir + " is not a directory"
                    : "--data " + dir + ": no such directory ('pistore volume create --data " + dir
                            + " NAME' makes it)");
        }
        return dir;
    }
}
