package io.pistore.transport.tcp.internal;

import io.pistore.security.access.AccessRules;
import io.pistore.security.access.AccessRules.Grant;
import io.pistore.security.access.ClientIdentity;
import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the host of one target connection may do with each volume, by the target's access rules
 * and the identity of the host's certificate (docs/SECURITY.md). A volume it may not use is left
 * out of its list and refused exactly as an unknown id is; a read-only one is listed read-only and
 * its writes, zero writes and deallocations are refused with {@link Status#ACCESS_DENIED}. Each
 * refusal is logged once per connection and volume, so a host that retries does not flood the log.
 * Loop thread only.
 */
final class HostAccess {
    private final AccessRules rules;
    private final ClientIdentity identity;
    private final String peer;
    /** Grants by volume name: the rules are read once per volume, not per request. */
    private final Map<String, Grant> grants = new HashMap<>();
    private final Set<String> logged = new HashSet<>();

    /** {@code identity} is null when the host showed no certificate: it then gets nothing. */
    HostAccess(AccessRules rules, ClientIdentity identity, String peer) {
        this.rules = rules;
        this.identity = identity;
        this.peer = peer;
    }

    Grant grant(String volume) {
        return grants.computeIfAbsent(volume, v -> rules.grant(identity, v));
    }

    /** The volumes this host may see, read-only ones marked so, ids unchanged. */
    List<WireVolume> visible(List<WireVolume> all) {
        List<WireVolume> mine = new ArrayList<>(all.size());
        for (WireVolume v : all) {
            Grant g = grant(v.info.name());
            if (g == Grant.READ_WRITE) {
                mine.add(v);
            } else if (g == Grant.READ_ONLY) {
                mine.add(new WireVolume(v.id, v.info.asReadOnly()));
            }
        }
        return mine;
    }

    /** Why this host may not send {@code opcode} to {@code v} (whose wire id is {@code id}), or null when it may. */
    Completion refusal(int opcode, WireVolume v, int id) {
        String name = v.info.name();
        Grant g = grant(name);
        if (g == Grant.NONE) {
            logOnce(name, "volume " + name + " refused: not granted to " + who());
            // word for word what an id that names no volume gets: the host learns nothing more
            return Completion.failure(Status.NO_SUCH_VOLUME, "no volume with id " + id);
        }
        if (g == Grant.READ_ONLY && writes(opcode)) {
            logOnce(name + "/ro", Protocol.opName(opcode) + " to volume " + name + " refused: read-only to " + who());
            return Completion.failure(Status.ACCESS_DENIED, "volume " + name + " is read-only to " + who());
        }
        return null;
    }

    private static boolean writes(int opcode) {
        return opcode == Protocol.OP_WRITE || opcode == Protocol.OP_WRITE_ZEROES || opcode == Protocol.OP_DEALLOCATE;
    }

    private String who() {
        return identity == null ? "a host without a certificate" : identity.toString();
    }

    private void logOnce(String key, String line) {
        if (logged.add(key)) {
            TcpConnection.LOG.log(System.Logger.Level.WARNING, "pistore tcp target: " + peer + ": " + line);
        }
    }
}
