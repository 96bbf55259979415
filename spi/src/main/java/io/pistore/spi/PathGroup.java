package io.pistore.spi;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The peers that serve one replicated volume, each with its {@link PathState} as one of them (the
 * {@code self} peer) sees it: the leader it knows optimized, the other members non-optimized, every
 * one inaccessible while it knows no leader, its own state as it reports it to hosts. A frontend that
 * tells hosts about all the paths to a volume at once (SCSI's target port groups) reads it.
 *
 * @param self   the replica id of the peer that says it; one of the states' keys
 * @param states per replica id, sorted by id
 */
public record PathGroup(String self, Map<String, PathState> states) {
    public PathGroup {
        if (!states.containsKey(self)) {
            throw new IllegalArgumentException("peer " + self + " is not among " + states.keySet());
        }
        states = Collections.unmodifiableMap(new TreeMap<>(states));
    }

    /** The state of the peer that says it. */
    public PathState own() {
        return states.get(self);
    }
}
