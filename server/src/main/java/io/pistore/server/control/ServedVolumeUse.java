package io.pistore.server.control;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.nbd.NbdServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * How {@code pistore serve} tells a volume in use: requests inside it now, requests within the last
 * {@link #QUIET_SECONDS} seconds (sampled once a second, and at the question), NBD clients bound to
 * its export, or iSCSI sessions logged in to its target (both ended by {@link #disconnect}). A tcp or
 * rdma host that is connected but idle is not seen: its connection spans every volume, and its next
 * request to a deleted one is answered as for a volume that does not exist.
 */
public final class ServedVolumeUse implements VolumeUse, AutoCloseable {
    public static final int QUIET_SECONDS = 5;

    private record Sample(long requests, long changedAtNanos) {
    }

    private final VolumeStore store;
    private final AtomicReference<NbdServer> nbd = new AtomicReference<>();
    private final AtomicReference<IscsiServer> iscsi = new AtomicReference<>();
    private final Map<String, Sample> samples = new ConcurrentHashMap<>();
    private final Thread sampler;
    private volatile boolean closed;

    public ServedVolumeUse(VolumeStore store) {
        this.store = store;
        this.sampler = new Thread(this::sampleLoop, "pistore-volume-use");
        this.sampler.setDaemon(true);
        sampleAll();
        this.sampler.start();
    }

    /** The NBD frontend whose clients count as users (set once it listens). */
    public void nbd(NbdServer server) {
        nbd.set(server);
    }

    /** The iSCSI frontend, told of resized volumes (set once it listens). */
    public void iscsi(IscsiServer server) {
        iscsi.set(server);
    }

    @Override
    public void changed(String volume) {
        IscsiServer s = iscsi.get();
        if (s != null) {
            s.volumeChanged(volume); // its sessions get CAPACITY DATA HAS CHANGED
        }
    }

    @Override
    public String inUse(String volume) {
        VolumeStore.Activity a = store.activity(volume);
        if (a == null) {
            return null;
        }
        List<String> why = new ArrayList<>();
        NbdServer n = nbd.get();
        int clients = n == null ? 0 : n.connectionsTo(volume);
        if (clients > 0) {
            why.add(clients + " NBD client(s)");
        }
        IscsiServer i = iscsi.get();
        int sessions = i == null ? 0 : i.sessionsOn(volume);
        if (sessions > 0) {
            why.add(sessions + " iSCSI session(s)");
        }
        if (a.inFlight() > 0) {
            why.add(a.inFlight() + " request(s) in flight");
        } else if (System.nanoTime() - sample(volume, a.requestsEntered()).changedAtNanos
                < TimeUnit.SECONDS.toNanos(QUIET_SECONDS)) {
            why.add("requests within the last " + QUIET_SECONDS + " s");
        }
        return why.isEmpty() ? null : String.join(", ", why);
    }

    @Override
    public int disconnect(String volume) {
        NbdServer n = nbd.get();
        IscsiServer i = iscsi.get();
        return (n == null ? 0 : n.disconnect(volume)) + (i == null ? 0 : i.disconnect(volume));
    }

    private void sampleLoop() {
        while (!closed) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            sampleAll();
        }
    }

    private void sampleAll() {
        for (var v : store.list()) {
            VolumeStore.Activity a = store.activity(v.name());
            if (a != null) {
                sample(v.name(), a.requestsEntered());
            }
        }
    }

    /**
     * The volume's sample after counting {@code requests}: a new count moves its time of change to
     * now. A volume first seen unused counts as changed long ago (a fresh server has no history of
     * use); one first seen with requests counted (created live and used before the sampler's next
     * tick) as changed now, since when is not known.
     */
    private Sample sample(String volume, long requests) {
        return samples.compute(volume, (k, old) -> old == null
                ? new Sample(requests, System.nanoTime() - (requests == 0 ? TimeUnit.SECONDS.toNanos(QUIET_SECONDS) : 0))
                : old.requests == requests ? old : new Sample(requests, System.nanoTime()));
    }

    @Override
    public void close() {
        closed = true;
        sampler.interrupt();
    }
}
