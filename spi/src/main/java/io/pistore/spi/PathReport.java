package io.pistore.spi;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one peer says of its paths: the {@link PathState} of each volume it serves, and its change
 * counter, which moves whenever any of those states changes (NVMe ANA's change count). A host that
 * knows a peer's counter asks it for news with that counter; an equal counter means nothing changed.
 *
 * @param counter the peer's change counter (never 0: a host that knows nothing sends 0)
 * @param states  per volume name, in the order the peer lists its volumes
 */
public record PathReport(long counter, Map<String, PathState> states) {
    public PathReport {
        states = Collections.unmodifiableMap(new LinkedHashMap<>(states));
    }

    /** The state of {@code volume}, or {@link PathState#INACCESSIBLE} for a volume the peer does not list. */
    public PathState state(String volume) {
        PathState s = states.get(volume);
        return s == null ? PathState.INACCESSIBLE : s;
    }
}
