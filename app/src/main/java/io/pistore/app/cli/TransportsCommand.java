package io.pistore.app.cli;

import io.pistore.engine.Transports;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code pistore transports}: each transport, whether it runs here, and the settings it takes. */
@Command(name = "transports", sortOptions = false,
        description = {"Lists the transports on the class path: whether each can run here (and why not), where it "
                + "checks PI, and each setting it takes (--transport-option NAME=VALUE) with its values and default.",
            "With --transport-option or --config, availability is judged with those settings."})
final class TransportsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOption config;

    @Mixin
    TransportOptionsOption transportOptions;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        TransportOptions settings = transportOptions.resolve(config);
        for (BlockTransportProvider p : Transports.all()) {
            Availability a = p.availability(settings);
            out.println(p.name() + ": " + (a.isAvailable() ? "available" : "unavailable (" + a.cause() + ")"));
            if (a.isAvailable()) {
                TransportCapabilities c = p.capabilities(settings);
                out.println("  PI checked in hardware for guards: " + (c.hardwareGuards().isEmpty() ? "none"
                        : c.hardwareGuards()) + "; largest request: " + c.maxTransferBytes() + " bytes");
            }
            if (p.options().isEmpty()) {
                out.println("  no settings");
            }
            for (TransportOption<?> o : p.options()) {
                String given = settings.asMap().get(o.name());
                out.println("  " + o.name() + " = " + (given != null ? given + " (given)" : o.defaultText())
                        + "  [" + o.values() + "]  " + o.description());
            }
        }
        return ExitCodes.OK;
    }
}
