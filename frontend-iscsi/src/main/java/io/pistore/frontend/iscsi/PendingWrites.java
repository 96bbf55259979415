package io.pistore.frontend.iscsi;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * The write commands of one connection that wait for Data-Out, by initiator task tag: the
 * connection's reader thread's alone. A task with a pooled buffer ({@link IscsiTask#buffer}) is
 * held twice while it waits here: by this map, whose reader may be reading a Data-Out into the
 * buffer, and by the task until it is answered or aborted, which a reset from another session may
 * do at any moment. The buffer goes back to the pool once both have let go
 * ({@link IscsiTask#releaseBuffer}), so an abort never hands it on while a segment is read into it.
 */
final class PendingWrites {
    private final Map<Integer, IscsiTask> byTag = new HashMap<>();
    private final DataInPool pool;

    PendingWrites(DataInPool pool) {
        this.pool = pool;
    }

    /** {@code t} waits for Data-Out (a pooled buffer's task was made with this map's hold on it). */
    void put(IscsiTask t) {
        byTag.put(t.itt, t);
    }

    int size() {
        return byTag.size();
    }

    IscsiTask get(int itt) {
        return byTag.get(itt);
    }

    /** {@code t}'s data is all in, or dropped: it leaves, and this map's hold on its buffer goes. */
    void remove(IscsiTask t) {
        if (byTag.remove(t.itt, t)) {
            t.releaseBuffer(pool);
        }
    }

    /** The tasks that another session aborted leave (no Data-Out may follow for them). */
    void removeAborted() {
        byTag.values().removeIf(t -> {
            if (t.aborted) {
                t.releaseBuffer(pool);
            }
            return t.aborted;
        });
    }

    void clear() {
        byTag.values().forEach(t -> t.releaseBuffer(pool));
        byTag.clear();
    }

    /**
     * Where the data segment ({@code len} bytes) of Data-Out {@code p} goes: a view of its task's
     * pooled buffer at the offset where the next bytes belong, when the PDU is the next one the task
     * expects; else null (an array, which the caller checks and refuses or copies).
     */
    ByteBuffer place(Pdu p, int len) {
        IscsiTask t = byTag.get(p.itt());
        if (t == null || t.buffer == null || t.aborted || !t.expects(p, len)) {
            return null;
        }
        return t.buffer.duplicate().limit(t.received + len).position(t.received);
    }
}
