package io.pistore.spi;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The volumes a reconnecting host queue knows of its target, by name: those of its first connection,
 * and those a later list added ({@link ReconnectingHostQueue#relistVolumes}). A peer met on a
 * reconnect is measured against them. Copy on write: read from any thread, written by one at a time.
 */
final class KnownVolumes {
    private volatile Map<String, VolumeInfo> byName;
    /**
     * Known volumes a single target came back with in another block format, with the reason their
     * requests are refused, until a relist names them again: the application sized its requests for
     * the format it knew.
     */
    private volatile Map<String, String> stale = Map.of();
    /** The known volumes requests have named: those whose path states the queue follows. */
    private final Set<String> used = java.util.concurrent.ConcurrentHashMap.newKeySet();

    KnownVolumes(List<VolumeInfo> first) {
        byName = index(first);
    }

    private static Map<String, VolumeInfo> index(List<VolumeInfo> list) {
        Map<String, VolumeInfo> m = new LinkedHashMap<>();
        for (VolumeInfo v : list) {
            m.put(v.name(), v);
        }
        return Collections.unmodifiableMap(m);
    }

    /** The names known. */
    Set<String> names() {
        return byName.keySet();
    }

    /** A request named {@code volume}: once known, it is one of those {@link #followed}. */
    void use(String volume) {
        if (!used.contains(volume) && byName.containsKey(volume)) {
            used.add(volume);
        }
    }

    /**
     * The volumes whose path states decide where the queue goes: those its requests named, or every
     * known one before any was (a volume learnt by a relist and led elsewhere does not hold it back).
     */
    Set<String> followed() {
        return used.isEmpty() ? names() : used;
    }

    /** Adds the volumes of {@code listed}, each as listed now; keeps those it lacks. */
    synchronized void learn(List<VolumeInfo> listed) {
        Map<String, VolumeInfo> m = new LinkedHashMap<>(byName);
        for (VolumeInfo v : listed) {
            m.put(v.name(), v);
        }
        byName = Collections.unmodifiableMap(m);
    }

    /** Becomes exactly {@code listed} (a single target's list, asked for by the application): nothing stale. */
    synchronized void replace(List<VolumeInfo> listed) {
        byName = index(listed);
        stale = Map.of();
    }

    /**
     * A single target's list met on a reconnect: becomes it, except that a known volume it lists in
     * another block format keeps the format known and is stale until {@link #replace}.
     */
    synchronized void reconnected(List<VolumeInfo> listed) {
        Map<String, VolumeInfo> m = new LinkedHashMap<>();
        Map<String, String> st = new LinkedHashMap<>(stale);
        for (VolumeInfo v : listed) {
            VolumeInfo k = byName.get(v.name());
            if (k != null && !k.format().equals(v.format())) {
                st.put(v.name(), "volume " + v.name() + " is now " + v.format() + " on the target, not " + k.format()
                        + " as this host knew it: open it again");
                m.put(v.name(), k);
            } else {
                st.remove(v.name());
                m.put(v.name(), v);
            }
        }
        byName = Collections.unmodifiableMap(m);
        stale = Collections.unmodifiableMap(st);
    }

    /** Why requests of {@code volume} are refused (a stale format), or null. */
    String staleReason(String volume) {
        Map<String, String> st = stale;
        return st.isEmpty() ? null : st.get(volume);
    }

    /** The names known that {@code listed} lacks. */
    List<String> lacking(List<VolumeInfo> listed) {
        Map<String, VolumeInfo> now = index(listed);
        List<String> out = new ArrayList<>();
        for (String n : byName.keySet()) {
            if (!now.containsKey(n)) {
                out.add(n);
            }
        }
        return out;
    }

    /** The known volumes {@code listed} holds with another block format, described, or null if none. */
    String reformatted(List<VolumeInfo> listed) {
        List<String> out = new ArrayList<>();
        for (VolumeInfo v : listed) {
            VolumeInfo k = byName.get(v.name());
            if (k != null && !k.format().equals(v.format())) {
                out.add(v.name() + " is " + v.format() + ", not " + k.format());
            }
        }
        return out.isEmpty() ? null : String.join("; ", out);
    }

    /** How {@code listed} differs from what is known ("new a; gone b; c resized to N blocks"), or null. */
    String changes(List<VolumeInfo> listed) {
        Map<String, VolumeInfo> now = index(listed);
        List<String> out = new ArrayList<>();
        for (VolumeInfo v : listed) {
            VolumeInfo k = byName.get(v.name());
            if (k == null) {
                out.add("new " + v.name());
            } else if (!k.equals(v)) {
                out.add("now " + v);
            }
        }
        for (String n : byName.keySet()) {
            if (!now.containsKey(n)) {
                out.add("gone " + n);
            }
        }
        return out.isEmpty() ? null : String.join("; ", out);
    }
}
