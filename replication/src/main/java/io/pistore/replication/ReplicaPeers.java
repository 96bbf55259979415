package io.pistore.replication;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;

/**
 * The peers of a replicated volume as a user writes them: {@code ID=HOST:PORT,ID=HOST:PORT,...},
 * each ID a target's replica id, each address where that target listens for replication traffic.
 */
public final class ReplicaPeers {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    private ReplicaPeers() {
    }

    /** Parses a peer list; an odd or empty entry, a repeated id or a missing port is refused with one line. */
    public static List<RaftPeer> parse(String spec) {
        List<RaftPeer> peers = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (String item : spec.split(",", -1)) {
            String s = item.trim();
            int eq = s.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("peer '" + s + "' is not ID=HOST:PORT");
            }
            String id = s.substring(0, eq);
            String addr = s.substring(eq + 1);
            checkId(id);
            int colon = addr.lastIndexOf(':');
            if (colon <= 0 || colon == addr.length() - 1) {
                throw new IllegalArgumentException("peer " + id + ": address '" + addr + "' is not HOST:PORT");
            }
            int port;
            try {
                port = Integer.parseInt(addr.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("peer " + id + ": port of '" + addr + "' must be 1 to 65535");
            }
            if (!ids.add(id)) {
                throw new IllegalArgumentException("peer " + id + " is named twice");
            }
            peers.add(RaftPeer.newBuilder().setId(id).setAddress(addr).build());
        }
        return peers;
    }

    /** Refuses an id that is not 1-64 letters, digits, '.', '_' or '-'. */
    public static void checkId(String id) {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("replica id must be 1-64 letters, digits, '.', '_' or '-', not '" + id + "'");
        }
    }

    /** Whether two peer collections name the same peers at the same addresses, in any order. */
    public static boolean sameMembers(java.util.Collection<RaftPeer> a, java.util.Collection<RaftPeer> b) {
        return a.size() == b.size() && keys(a).equals(keys(b));
    }

    private static Set<String> keys(java.util.Collection<RaftPeer> peers) {
        Set<String> k = new HashSet<>();
        peers.forEach(p -> k.add(p.getId() + "=" + p.getAddress()));
        return k;
    }

    /** {@code ID=HOST:PORT,...} of a list. */
    public static String describe(List<RaftPeer> peers) {
        StringBuilder b = new StringBuilder();
        for (RaftPeer p : peers) {
            b.append(b.length() == 0 ? "" : ",").append(p.getId()).append('=').append(p.getAddress());
        }
        return b.toString();
    }

    /** The Raft group of the volume named {@code name}: the same on every peer. */
    public static RaftGroupId groupId(String name) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("pistore volume " + name).getBytes(StandardCharsets.UTF_8)));
    }
}
