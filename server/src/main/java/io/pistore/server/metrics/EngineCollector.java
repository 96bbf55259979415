package io.pistore.server.metrics;

import io.pistore.engine.stats.LatencyBuckets;
import io.pistore.engine.stats.PiErrorPlace;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.stats.TransportCounters;
import io.pistore.engine.stats.VolumeCounters;
import io.pistore.engine.volume.CacheFigures;
import io.pistore.engine.volume.JournalFigures;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Turns the engine's counters ({@link TargetStats}), the NBD frontend's and the reconnects of host
 * connections into Prometheus metric snapshots when the endpoint is scraped. Nothing is recorded
 * through the Prometheus client on the request path: the engine keeps its own cheap counters, and
 * this reads them once per scrape. The names and labels are listed in docs/OPERATIONS.md.
 */
public final class EngineCollector implements MultiCollector {
    private static final double[] BOUNDS_SECONDS = bounds();

    private final TargetStats stats;
    private final List<NbdServer> nbdServers = new CopyOnWriteArrayList<>();
    private final List<io.pistore.frontend.iscsi.IscsiServer> iscsiServers = new CopyOnWriteArrayList<>();
    private final Map<HostConnection, String> hostConnections = new ConcurrentHashMap<>();
    private final List<VolumeStore> stores = new CopyOnWriteArrayList<>();
    private final List<io.pistore.server.scrub.PeriodicScrub> scrubs = new CopyOnWriteArrayList<>();

    public EngineCollector(TargetStats stats) {
        this.stats = stats;
    }

    private static double[] bounds() {
        double[] b = new double[LatencyBuckets.count()];
        for (int i = 0; i < LatencyBuckets.finiteCount(); i++) {
            b[i] = LatencyBuckets.upperNanos(i) / 1e9;
        }
        b[b.length - 1] = Double.POSITIVE_INFINITY;
        return b;
    }

    /** Reports the journal and cache figures of the volumes of {@code store} (file volumes have them). */
    public void add(VolumeStore store) {
        stores.add(store);
    }

    /** Reports what a background scrub found, per volume. */
    public void add(io.pistore.server.scrub.PeriodicScrub scrub) {
        scrubs.add(scrub);
    }

    /** Reports the connections and queue-full retries of an NBD frontend, while it runs. */
    public void add(NbdServer server) {
        nbdServers.add(server);
    }

    public void remove(NbdServer server) {
        nbdServers.remove(server);
    }

    /** Reports the initiator connections of an iSCSI frontend, while it runs. */
    public void add(io.pistore.frontend.iscsi.IscsiServer server) {
        iscsiServers.add(server);
    }

    public void remove(io.pistore.frontend.iscsi.IscsiServer server) {
        iscsiServers.remove(server);
    }

    /** Reports the reconnects of a host connection over {@code transport}, while it is open. */
    public void add(HostConnection connection, String transport) {
        hostConnections.put(connection, transport);
    }

    public void remove(HostConnection connection) {
        hostConnections.remove(connection);
    }

    @Override
    public MetricSnapshots collect() {
        CounterSnapshot.Builder requests = counter("pistore_requests", "Requests that completed, by operation");
        CounterSnapshot.Builder bytes = counter("pistore_request_bytes",
                "Data bytes moved by successful reads and writes, by operation");
        CounterSnapshot.Builder failures = counter("pistore_request_failures",
                "Requests that completed with an error, by operation and status");
        HistogramSnapshot.Builder latency = HistogramSnapshot.builder().name("pistore_request_latency_seconds")
                .help("Time from the request reaching the engine to its completion, by operation; a random "
                        + "sample of the requests (serve --metrics-latency-sample)");
        GaugeSnapshot.Builder inFlight = GaugeSnapshot.builder().name("pistore_requests_in_flight")
                .help("Requests handed to the engine and not completed yet");
        CounterSnapshot.Builder fua = counter("pistore_fua_writes", "Writes and zeroing requests with FUA");
        CounterSnapshot.Builder pi = counter("pistore_pi_errors",
                "PI check failures by kind (guard, app, ref) and where they were caught (host, wire, target, rest)");
        GaugeSnapshot.Builder connections = GaugeSnapshot.builder().name("pistore_connections")
                .help("Host (or NBD client) connections open now");
        CounterSnapshot.Builder opened = counter("pistore_connections_opened", "Connections accepted since start");
        CounterSnapshot.Builder queueFull = counter("pistore_queue_full",
                "Requests a frontend resubmitted because the engine's queue was full");
        CounterSnapshot.Builder resends = counter("pistore_resends",
                "Requests a frontend sent again after a transport error (its connection to the target lost)");
        CounterSnapshot.Builder resendsGivenUp = counter("pistore_resends_given_up",
                "Requests a frontend failed because their transport errors outlasted the resend deadline");
        CounterSnapshot.Builder reconnects = counter("pistore_reconnects",
                "Connections to a target made again after they were lost");
        for (TransportCounters t : stats.transports()) {
            Labels tl = Labels.of("transport", t.transport());
            if (!t.transport().equals("nbd") && !t.transport().equals("iscsi")) { // the frontends' are their clients', below
                connections.dataPoint(GaugeDataPointSnapshot.builder().labels(tl).value(t.connectionsOpen()).build());
                opened.dataPoint(point(tl, t.connectionsOpened()));
            }
            for (VolumeCounters v : t.volumes()) {
                Labels vl = Labels.of("transport", t.transport(), "volume", v.volume());
                inFlight.dataPoint(GaugeDataPointSnapshot.builder().labels(vl).value(v.inFlight()).build());
                fua.dataPoint(point(vl, v.fuaWrites()));
                for (PiErrorKind k : PiErrorKind.values()) {
                    for (PiErrorPlace p : PiErrorPlace.values()) {
                        pi.dataPoint(point(vl.add("kind", k.shortName()).add("where", p.label()), v.piErrors(k, p)));
                    }
                }
                for (Operation op : Operation.values()) {
                    long n = v.requests(op);
                    if (n == 0) {
                        continue;
                    }
                    Labels ol = vl.add("op", op.name().toLowerCase(Locale.ROOT));
                    requests.dataPoint(point(ol, n));
                    if (op == Operation.READ || op == Operation.WRITE) {
                        bytes.dataPoint(point(ol, v.bytes(op)));
                    }
                    for (Status s : Status.values()) {
                        long f = s == Status.SUCCESS ? 0 : v.failures(op, s);
                        if (f > 0) {
                            failures.dataPoint(point(ol.add("status", s.name().toLowerCase(Locale.ROOT)), f));
                        }
                    }
                    latency.dataPoint(HistogramDataPointSnapshot.builder().labels(ol)
                            .classicHistogramBuckets(ClassicHistogramBuckets.of(BOUNDS_SECONDS, v.latencyBuckets(op)))
                            .sum(v.latencyNanos(op) / 1e9).build());
                }
            }
        }
        for (NbdServer s : nbdServers) {
            Labels l = Labels.of("transport", "nbd");
            connections.dataPoint(GaugeDataPointSnapshot.builder().labels(l).value(s.connectionsOpen()).build());
            opened.dataPoint(point(l, s.connectionsAccepted()));
            queueFull.dataPoint(point(Labels.of("frontend", "nbd"), s.queueFullRetries()));
            resends.dataPoint(point(Labels.of("frontend", "nbd"), s.resends()));
            resendsGivenUp.dataPoint(point(Labels.of("frontend", "nbd"), s.resendsGivenUp()));
        }
        for (io.pistore.frontend.iscsi.IscsiServer s : iscsiServers) {
            Labels l = Labels.of("transport", "iscsi");
            connections.dataPoint(GaugeDataPointSnapshot.builder().labels(l).value(s.connectionsOpen()).build());
            opened.dataPoint(point(l, s.connectionsAccepted()));
        }
        for (Map.Entry<HostConnection, String> e : hostConnections.entrySet()) {
            reconnects.dataPoint(point(Labels.of("transport", e.getValue()), e.getKey().reconnects()));
        }
        List<io.prometheus.metrics.model.snapshots.MetricSnapshot> all = new java.util.ArrayList<>(List.of(
                requests.build(), bytes.build(), failures.build(), latency.build(), inFlight.build(), fua.build(),
                pi.build(), connections.build(), opened.build(), queueFull.build(), resends.build(),
                resendsGivenUp.build(), reconnects.build()));
        all.addAll(storage());
        return new MetricSnapshots(all);
    }

    /** The journal and cache figures of every file volume of the stores, labelled by volume. */
    private List<io.prometheus.metrics.model.snapshots.MetricSnapshot> storage() {
        List<Map.Entry<Labels, JournalFigures>> journals = new java.util.ArrayList<>();
        List<Map.Entry<Labels, CacheFigures>> caches = new java.util.ArrayList<>();
        for (VolumeStore store : stores) {
            for (Volume v : store.list()) {
                Labels l = Labels.of("volume", v.name());
                JournalFigures j = store.journalFigures(v.name());
                if (j != null) {
                    journals.add(Map.entry(l, j));
                }
                CacheFigures c = store.cacheFigures(v.name());
                if (c != null) {
                    caches.add(Map.entry(l, c));
                }
            }
        }
        List<io.prometheus.metrics.model.snapshots.MetricSnapshot> all = new java.util.ArrayList<>();
        for (StorageMetric<JournalFigures> m : StorageMetric.JOURNAL) {
            all.add(m.snapshot(journals));
        }
        for (StorageMetric<CacheFigures> m : StorageMetric.CACHE) {
            all.add(m.snapshot(caches));
        }
        List<Map.Entry<Labels, io.pistore.server.scrub.PeriodicScrub.Figures>> scrubbed = new java.util.ArrayList<>();
        for (io.pistore.server.scrub.PeriodicScrub s : scrubs) {
            s.figures().forEach((volume, f) -> scrubbed.add(Map.entry(Labels.of("volume", volume), f)));
        }
        if (!scrubs.isEmpty()) {
            for (StorageMetric<io.pistore.server.scrub.PeriodicScrub.Figures> m : StorageMetric.SCRUB) {
                all.add(m.snapshot(scrubbed));
            }
        }
        return all;
    }

    private static CounterSnapshot.Builder counter(String name, String help) {
        return CounterSnapshot.builder().name(name).help(help);
    }

    private static CounterDataPointSnapshot point(Labels labels, long value) {
        return CounterDataPointSnapshot.builder().labels(labels).value(value).build();
    }
}
