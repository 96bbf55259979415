package io.pistore.engine;

import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportOptions;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Finds transport providers by name, checks transport options against what the providers
 * declare, and explains, in one line each, the transports that cannot run here.
 */
public final class Transports {
    private Transports() {
    }

    /** All providers on the class path, by name. */
    public static List<BlockTransportProvider> all() {
        return BlockTransportProvider.all();
    }

    /** The available provider called {@code name}, with default settings. */
    public static BlockTransportProvider find(String name) {
        return find(name, TransportOptions.NONE);
    }

    /**
     * The provider called {@code name}, available with these settings, which are checked first
     * (see {@link #check}).
     *
     * @throws IllegalArgumentException for a bad setting, an unknown transport, or an unavailable
     *     one (naming the available transports and each unavailable one's cause)
     */
    public static BlockTransportProvider find(String name, TransportOptions options) {
        check(options);
        for (BlockTransportProvider p : all()) {
            if (p.name().equals(name)) {
                if (p.availability(options).isAvailable()) {
                    return p;
                }
                throw new IllegalArgumentException("transport '" + name + "' is unavailable: "
                        + p.availability(options).cause() + " (available: " + availableNames(options) + ")");
            }
        }
        throw new IllegalArgumentException("unknown transport '" + name + "'; " + describe(options));
    }

    /**
     * Checks every setting against the provider its name starts with: that provider must be on the
     * class path and declare the option, and the value must parse.
     *
     * @throws IllegalArgumentException naming the first bad setting and why
     */
    public static void check(TransportOptions options) {
        List<BlockTransportProvider> all = all();
        for (String t : options.transports()) {
            BlockTransportProvider p = all.stream().filter(x -> x.name().equals(t)).findFirst().orElse(null);
            if (p == null) {
                String bad = options.asMap().keySet().stream().filter(k -> k.startsWith(t + ".")).findFirst()
                        .orElse(t);
                throw new IllegalArgumentException("option '" + bad + "' names no transport on the class path"
                        + " (transports: " + all.stream().map(BlockTransportProvider::name)
                        .collect(Collectors.joining(", ")) + ")");
            }
            options.check(t, p.options());
        }
    }

    private static String availableNames(TransportOptions options) {
        String ok = all().stream().filter(p -> p.availability(options).isAvailable()).map(BlockTransportProvider::name)
                .collect(Collectors.joining(", "));
        return ok.isEmpty() ? "none" : ok;
    }

    /** {@code available: local, tcp; unavailable: rdma (no RDMA device)}. */
    public static String describe() {
        return describe(TransportOptions.NONE);
    }

    /** As {@link #describe()}, with these settings. */
    public static String describe(TransportOptions options) {
        List<BlockTransportProvider> all = all();
        String bad = all.stream().filter(p -> !p.availability(options).isAvailable())
                .map(p -> p.name() + " (" + p.availability(options).cause() + ")").collect(Collectors.joining(", "));
        return "available: " + availableNames(options) + (bad.isEmpty() ? "" : "; unavailable: " + bad);
    }
}
