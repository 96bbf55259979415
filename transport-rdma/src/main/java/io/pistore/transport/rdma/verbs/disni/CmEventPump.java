package io.pistore.transport.rdma.verbs.disni;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A device's RDMA CM event thread: takes each event off the event channel and routes it by the id it
 * concerns. A CONNECT_REQUEST goes to the listener it arrived on (none: the id is destroyed, which
 * rejects it); an id a connect is stepping through gets its events queued for that connect; an id
 * between accept and ESTABLISHED goes back to its listener; DISCONNECTED or DEVICE_REMOVAL on an
 * established connection tells that connection. Events nobody registered for are dropped.
 *
 * <p>The routing tables live here because the event thread reads them; the connector and listeners
 * fill and empty them.
 */
final class CmEventPump {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");
    /** How long one {@code getCmEvent} waits, so that {@link #stop} is seen. */
    static final int EVENT_POLL_MS = 100;

    private final DisniOps ops;
    private final DisniOps.Channel channel;
    private final Thread thread;
    private volatile boolean stopped;

    private final Map<DisniOps.Id, BlockingQueue<CmEventType>> waiters = new ConcurrentHashMap<>();
    private final Map<DisniOps.Id, DisniListener> listeners = new ConcurrentHashMap<>();
    private final Map<DisniOps.Id, DisniListener.Accepting> accepting = new ConcurrentHashMap<>();
    private final Map<DisniOps.Id, DisniConnection> connections = new ConcurrentHashMap<>();

    CmEventPump(DisniOps ops, DisniOps.Channel channel) {
        this.ops = ops;
        this.channel = channel;
        this.thread = new Thread(this::run, "pistore-disni-cm");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean stopped() {
        return stopped;
    }

    /** Ends the thread (waiting for it a little longer than two polls). */
    void stop() {
        stopped = true;
        try {
            thread.join(2L * EVENT_POLL_MS + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- routing tables

    /** Queues every later event on {@code id} for the caller, until {@link #stopWaiting}. */
    BlockingQueue<CmEventType> waitOn(DisniOps.Id id) {
        BlockingQueue<CmEventType> q = new LinkedBlockingQueue<>();
        waiters.put(id, q);
        return q;
    }

    void stopWaiting(DisniOps.Id id) {
        waiters.remove(id);
    }

    void addListener(DisniOps.Id id, DisniListener l) {
        listeners.put(id, l);
    }

    void removeListener(DisniOps.Id id) {
        listeners.remove(id);
    }

    void addAccepting(DisniOps.Id id, DisniListener.Accepting a) {
        accepting.put(id, a);
    }

    void removeAccepting(DisniOps.Id id) {
        accepting.remove(id);
    }

    void addConnection(DisniOps.Id id, DisniConnection c) {
        connections.put(id, c);
    }

    void removeConnection(DisniOps.Id id) {
        connections.remove(id);
    }

    List<DisniListener> listeners() {
        return new ArrayList<>(listeners.values());
    }

    List<DisniConnection> connections() {
        return new ArrayList<>(connections.values());
    }

    // ---------------------------------------------------------------- the thread

    private void run() {
        while (!stopped) {
            DisniOps.CmEvent ev;
            try {
                ev = ops.getCmEvent(channel, EVENT_POLL_MS);
            } catch (IOException e) {
                if (!stopped) {
                    LOG.log(System.Logger.Level.WARNING, "disni: rdma_get_cm_event failed: "
                            + DisniProbe.firstLine(String.valueOf(e.getMessage())));
                    sleepQuietly();
                }
                continue;
            }
            if (ev != null) {
                try {
                    dispatch(ev);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "disni: handling " + ev.type() + " failed: " + e);
                }
            }
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(EVENT_POLL_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Routes one event: connect request to its listener, others to whoever registered the id. */
    void dispatch(DisniOps.CmEvent ev) {
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            DisniListener l = ev.listenId() == null ? null : listeners.get(ev.listenId());
            if (l == null) {
                ops.destroyId(ev.id());
            } else {
                l.onConnectRequest(ev.id());
            }
            return;
        }
        if (ev.id() == null) {
            return;
        }
        BlockingQueue<CmEventType> w = waiters.get(ev.id());
        if (w != null) {
            w.offer(ev.type());
            return;
        }
        DisniListener.Accepting a = accepting.remove(ev.id());
        if (a != null) {
            if (ev.type() == CmEventType.ESTABLISHED) {
                a.listener().established(ev.id(), a);
            } else {
                a.listener().notEstablished(ev.id(), a, ev.type());
            }
            return;
        }
        DisniConnection c = connections.get(ev.id());
        if (c != null && (ev.type() == CmEventType.DISCONNECTED || ev.type() == CmEventType.DEVICE_REMOVAL)) {
            c.peerDisconnected();
        }
    }
}
