package io.pistore.app.cli;

import io.pistore.engine.Transports;
import io.pistore.spi.TransportOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * {@code --transport-option NAME=VALUE} (repeatable): a transport setting such as
 * {@code tcp.ioThreads=4} or {@code rdma.pi=cpu}. In a {@code --config} file the same settings are
 * lines {@code NAME=VALUE} (every key with a dot in it); the command line wins over the file.
 * {@code pistore transports} lists every option with its values and default.
 */
public final class TransportOptionsOption {
    @Option(names = "--transport-option", paramLabel = "NAME=VALUE",
            description = "A transport setting, e.g. tcp.ioThreads=4 or rdma.pi=cpu (repeatable; "
                    + "'pistore transports' lists them; in --config: NAME=VALUE lines).")
    List<String> given = new ArrayList<>();

    /**
     * The settings of the config file, then of the command line, checked against the providers.
     *
     * @throws CliException (usage) naming the bad setting
     */
    public TransportOptions resolve(ConfigOption config) {
        try {
            Map<String, String> m = new LinkedHashMap<>();
            Properties file = config.load();
            if (file != null) {
                for (String k : file.stringPropertyNames()) {
                    if (k.contains(".")) {
                        m.put(k, file.getProperty(k));
                    }
                }
            }
            TransportOptions o = TransportOptions.of(m).withAll(TransportOptions.parse(given));
            Transports.check(o);
            return o;
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }
}
