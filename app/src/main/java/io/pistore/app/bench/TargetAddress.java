package io.pistore.app.bench;

import io.pistore.spi.BlockTransportProvider;

/**
 * A host's {@code --target}: one address, or for a transport that fails over by itself (tcp, rdma) a
 * comma-separated list of peers serving the same volumes. The transport parses the list (and names a
 * malformed element); this refuses a list for a transport that takes one address, before connecting,
 * so the user reads why instead of that transport's parse error about a strange address.
 */
public final class TargetAddress {
    private TargetAddress() {
    }

    /** @throws IllegalArgumentException (one line) when {@code target} is a list that {@code p} does not take */
    public static void check(BlockTransportProvider p, String target) {
        if (target != null && target.contains(",") && !p.takesPeerLists()) {
            throw new IllegalArgumentException("--target " + target + ": transport " + p.name()
                    + " takes one address, not a list of peers (tcp and rdma fail over among peers)");
        }
    }
}
