package io.pistore.engine.stats;

import java.util.Collection;
import java.util.Collections;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;

/** The counters of one transport (or frontend) of a target: its connections and one set per volume. */
public final class TransportCounters {
    private final String transport;
    private final ConcurrentMap<String, VolumeCounters> volumes = new ConcurrentHashMap<>();
    private final LongAdder open = new LongAdder();
    private final LongAdder opened = new LongAdder();

    TransportCounters(String transport) {
        this.transport = transport;
    }

    public String transport() {
        return transport;
    }

    /** The counters of {@code volume} through this transport, made on first use. */
    public VolumeCounters volume(String volume) {
        VolumeCounters c = volumes.get(volume);
        return c != null ? c : volumes.computeIfAbsent(volume, v -> new VolumeCounters(transport, v));
    }

    /** Every volume that has counters, in no particular order. */
    public Collection<VolumeCounters> volumes() {
        return Collections.unmodifiableCollection(volumes.values());
    }

    void connected() {
        open.increment();
        opened.increment();
    }

    void disconnected() {
        open.decrement();
    }

    /** Host connections open now. */
    public long connectionsOpen() {
        return open.sum();
    }

    /** Host connections accepted since start. */
    public long connectionsOpened() {
        return opened.sum();
    }
}
