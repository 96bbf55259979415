package io.pistore.transport.tcp.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A host's target address: one {@code host:port}, or a comma-separated list of peers that serve
 * the same volumes (the peers of a replicated volume). The host connects to the first that answers
 * and, when its connection is lost, reconnects to the next one round robin, so a host survives the
 * peer it uses dying. Parsed whole before anything connects: a malformed element, an empty one or a
 * peer listed twice is refused with one line naming it.
 */
final class PeerList {
    private final List<InetSocketAddress> addresses;
    private final List<String> names;

    private PeerList(List<InetSocketAddress> addresses, List<String> names) {
        this.addresses = Collections.unmodifiableList(addresses);
        this.names = Collections.unmodifiableList(names);
    }

    static PeerList parse(String target) throws IOException {
        if (target == null || target.isBlank()) {
            throw new IOException("a tcp target is HOST:PORT or a list HOST:PORT,HOST:PORT,..., not '" + target + "'");
        }
        String[] parts = target.split(",", -1);
        List<InetSocketAddress> as = new ArrayList<>();
        List<String> ns = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            if (parts[i].isBlank()) {
                throw new IOException("peer " + (i + 1) + " of tcp target list '" + target + "' is empty");
            }
            InetSocketAddress a;
            try {
                a = Addresses.parse(parts[i]);
            } catch (IOException e) {
                throw new IOException(parts.length == 1 ? e.getMessage()
                        : "peer " + (i + 1) + " of tcp target list '" + target + "': " + e.getMessage());
            }
            String name = Addresses.format(a);
            if (ns.contains(name)) {
                throw new IOException("peer " + name + " is listed twice in tcp target list '" + target + "'");
            }
            as.add(a);
            ns.add(name);
        }
        return new PeerList(as, ns);
    }

    int size() {
        return addresses.size();
    }

    InetSocketAddress address(int i) {
        return addresses.get(i);
    }

    /** Peer {@code i} as {@code host:port} (resolved, brackets around IPv6). */
    String name(int i) {
        return names.get(i);
    }

    /** Every peer, as named in log lines. */
    List<String> names() {
        return names;
    }

    /** The peer after {@code i}, round robin (itself for a list of one). */
    int next(int i) {
        return (i + 1) % addresses.size();
    }

    @Override
    public String toString() {
        return String.join(",", names);
    }
}
