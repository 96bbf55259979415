package io.pistore.transport.rdma.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A host's target address: one {@code HOST:PORT}, or a comma-separated list of peers that serve the
 * same volumes (the peers of a replicated volume). The host connects to the first that answers and,
 * when a queue's connection is lost, reconnects it to the next one round robin. Parsed whole before
 * anything connects: an empty element, one that is not {@code HOST:PORT}, or a peer listed twice is
 * refused with one line naming it. (tcp has its own, which resolves names; rdma addresses are the
 * verbs provider's to resolve.)
 */
final class PeerList {
    private final List<String> names;

    private PeerList(List<String> names) {
        this.names = List.copyOf(names);
    }

    static PeerList parse(String target) throws IOException {
        if (target == null || target.isBlank()) {
            throw new IOException("an rdma target is HOST:PORT or a list HOST:PORT,HOST:PORT,..., not '" + target + "'");
        }
        String[] parts = target.split(",", -1);
        if (parts.length == 1) {
            return new PeerList(List.of(target.trim())); // a single address goes to the provider as it is
        }
        List<String> ns = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i].trim();
            String where = "peer " + (i + 1) + " of rdma target list '" + target + "'";
            if (p.isEmpty()) {
                throw new IOException(where + " is empty");
            }
            int colon = p.lastIndexOf(':');
            if (colon <= 0 || !p.substring(colon + 1).matches("[0-9]{1,5}")
                    || Integer.parseInt(p.substring(colon + 1)) > 65535) {
                throw new IOException(where + " is not HOST:PORT: '" + p + "'");
            }
            if (ns.contains(p)) {
                throw new IOException("peer " + p + " is listed twice in rdma target list '" + target + "'");
            }
            ns.add(p);
        }
        return new PeerList(ns);
    }

    int size() {
        return names.size();
    }

    /** Peer {@code i} as given. */
    String name(int i) {
        return names.get(i);
    }

    /** Every peer, as named in log lines. */
    List<String> names() {
        return names;
    }

    /** The peer after {@code i}, round robin (itself for a list of one). */
    int next(int i) {
        return (i + 1) % names.size();
    }

    @Override
    public String toString() {
        return String.join(",", names);
    }
}
