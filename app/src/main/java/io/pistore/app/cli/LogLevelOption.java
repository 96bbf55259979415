package io.pistore.app.cli;

import picocli.CommandLine.Option;

/** {@code --log-level}: which log lines a command prints. */
public final class LogLevelOption {
    @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info",
            description = "error, warn, info or debug: the least severe log lines printed (default: ${DEFAULT-VALUE}; "
                    + "debug adds internal figures such as how NBD connections waited for input; config key: log-level).")
    String level;

    public LogLevel level() {
        return LogLevel.parse(level);
    }
}
