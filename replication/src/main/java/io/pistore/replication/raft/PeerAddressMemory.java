package io.pistore.replication.raft;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * The address each peer name had when this replica first saw it in a configuration of its group
 * (since its process started applying the log). A Ratis server keeps the first address it was given
 * for a peer name (its map of connections is keyed by name and never updated), so a name that comes
 * back at another address is never reached and its join waits out the change's whole timeout. A join
 * asks the leader's record ({@link ReplicaCommand.Op#PEERS}) and is refused at once instead.
 * Encoded as UTF-8 lines {@code name address}.
 */
public final class PeerAddressMemory {
    private final Map<String, String> first = new ConcurrentHashMap<>();

    /** Records the peers of a configuration; a name seen before keeps its first address. */
    void saw(Collection<RaftPeer> peers) {
        for (RaftPeer p : peers) {
            if (p.getAddress() != null) {
                first.putIfAbsent(p.getId().toString(), p.getAddress());
            }
        }
    }

    Message encode() {
        StringBuilder b = new StringBuilder();
        first.forEach((name, address) -> b.append(name).append(' ').append(address).append('\n'));
        return Message.valueOf(ByteString.copyFrom(b.toString(), StandardCharsets.UTF_8));
    }

    /** Name to first address, from {@link #encode}'s bytes. */
    public static Map<String, String> decode(ByteString bytes) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : bytes.toString(StandardCharsets.UTF_8).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int sp = line.indexOf(' ');
            if (sp <= 0 || sp == line.length() - 1) {
                throw new IllegalArgumentException("peer address line '" + line + "' is not 'name address'");
            }
            m.put(line.substring(0, sp), line.substring(sp + 1));
        }
        return m;
    }
}
