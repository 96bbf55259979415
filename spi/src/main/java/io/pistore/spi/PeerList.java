package io.pistore.spi;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A host's target address: one address, or a comma-separated list of peers that serve the same
 * volumes (the peers of a replicated volume). The one rule every transport that fails over among
 * peers (tcp, rdma) reads a target by: the host connects to the first that answers
 * ({@link PeerChoice}) and, when a queue's connection is lost, reconnects to the next one round robin
 * ({@link ReconnectingHostQueue}).
 *
 * <p>Parsed whole before anything connects. Each element is read by the transport's own address
 * parser (tcp resolves names, rdma checks {@code HOST:PORT} and leaves resolving to its verbs
 * provider); refused with one line are an empty target ({@code the tcp target is HOST:PORT or a list
 * ...}), an empty element ({@code peer 2 of tcp target list 'A,' is empty}), an element the parser
 * refuses ({@code peer 2 of tcp target list 'A,B': <the parser's reason>}; a single address: the
 * parser's reason alone) and a peer listed twice, by its name ({@code peer A is listed twice in tcp
 * target list 'A,A'}).
 *
 * @param <A> the transport's address of one peer
 */
public final class PeerList<A> {
    /** How a transport reads one peer's address; the message of its refusal says what is wrong. */
    @FunctionalInterface
    public interface AddressParser<A> {
        A parse(String address) throws IOException;
    }

    private final List<A> addresses;
    private final List<String> names;

    private PeerList(List<A> addresses, List<String> names) {
        this.addresses = List.copyOf(addresses);
        this.names = List.copyOf(names);
    }

    /**
     * Reads {@code target} for {@code transport} (named in the messages).
     *
     * @param parser reads one element
     * @param name   a peer's name in log lines, also what makes two elements the same peer
     */
    public static <A> PeerList<A> parse(String transport, String target, AddressParser<A> parser,
            Function<A, String> name) throws IOException {
        if (target == null || target.isBlank()) {
            throw new IOException("the " + transport + " target is HOST:PORT or a list HOST:PORT,HOST:PORT,..., not '"
                    + target + "'");
        }
        String[] parts = target.split(",", -1);
        List<A> as = new ArrayList<>();
        List<String> ns = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            String where = "peer " + (i + 1) + " of " + transport + " target list '" + target + "'";
            if (parts[i].isBlank()) {
                throw new IOException(where + " is empty");
            }
            A a;
            try {
                a = parser.parse(parts[i].trim());
            } catch (IOException e) {
                throw new IOException(parts.length == 1 ? e.getMessage() : where + ": " + e.getMessage(), e);
            }
            String n = name.apply(a);
            if (ns.contains(n)) {
                throw new IOException("peer " + n + " is listed twice in " + transport + " target list '" + target + "'");
            }
            as.add(a);
            ns.add(n);
        }
        return new PeerList<>(as, ns);
    }

    public int size() {
        return addresses.size();
    }

    /** Peer {@code i}'s address, as the transport's parser read it. */
    public A address(int i) {
        return addresses.get(i);
    }

    /** Peer {@code i} as named in log lines. */
    public String name(int i) {
        return names.get(i);
    }

    /** Every peer, as named in log lines, in the target's order. */
    public List<String> names() {
        return names;
    }

    /** The peer after {@code i}, round robin (itself for a list of one). */
    public int next(int i) {
        return (i + 1) % addresses.size();
    }

    @Override
    public String toString() {
        return String.join(",", names);
    }
}
