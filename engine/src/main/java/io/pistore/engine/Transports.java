package io.pistore.engine;

import io.pistore.spi.BlockTransportProvider;
import java.util.List;
import java.util.stream.Collectors;

/** Finds transport providers by name and explains, in one line each, the ones that cannot run here. */
public final class Transports {
    private Transports() {
    }

    /** All providers on the class path, by name. */
    public static List<BlockTransportProvider> all() {
        return BlockTransportProvider.all();
    }

    /**
     * The available provider called {@code name}.
     *
     * @throws IllegalArgumentException naming the available transports and each unavailable one's cause
     */
    public static BlockTransportProvider find(String name) {
        for (BlockTransportProvider p : all()) {
            if (p.name().equals(name)) {
                if (p.availability().isAvailable()) {
                    return p;
                }
                throw new IllegalArgumentException("transport '" + name + "' is unavailable: "
                        + p.availability().cause() + " (available: " + availableNames() + ")");
            }
        }
        throw new IllegalArgumentException("unknown transport '" + name + "'; " + describe());
    }

    private static String availableNames() {
        String ok = all().stream().filter(p -> p.availability().isAvailable()).map(BlockTransportProvider::name)
                .collect(Collectors.joining(", "));
        return ok.isEmpty() ? "none" : ok;
    }

    /** {@code available: local, tcp; unavailable: rdma (no RDMA device)}. */
    public static String describe() {
        List<BlockTransportProvider> all = all();
        String bad = all.stream().filter(p -> !p.availability().isAvailable())
                .map(p -> p.name() + " (" + p.availability().cause() + ")").collect(Collectors.joining(", "));
        return "available: " + availableNames() + (bad.isEmpty() ? "" : "; unavailable: " + bad);
    }
}
