package io.pistore.it.reliability;

import io.pistore.engine.Transports;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.InjectTarget;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import io.pistore.testkit.ForwardingHostConnection;
import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * A test-only transport, {@code faulty}, that wraps another transport through the SPI and flips one
 * bit of a request's or a response's data, guard, application tag or reference tag at a chosen
 * rate: a faulty hop. Unavailable unless a test calls {@link #enable}.
 *
 * <p>It injects only where a later hop is asked to check what it corrupts, so that every injection
 * must surface as a PI error (a single flipped bit is always caught by the CRC guards, and by a
 * reference or application tag compare when the request's check flags name it):
 * <ul>
 *   <li>{@link Site#HOST_REQUEST}: a pass-mode write's data or PI after the application generated it,
 *       before the inner transport sends it (the target checks it);
 *   <li>{@link Site#HOST_RESPONSE}: a pass-mode read's data or PI after the inner transport delivered
 *       it, before the application checks it;
 *   <li>{@link Site#TARGET_REQUEST}: a write between the inner transport's target side and the engine;
 *       the engine is then told the PI was not checked in the transport, so it checks;
 *   <li>{@link Site#TARGET_RESPONSE}: a read's data or PI between the engine and the inner transport's
 *       target side, when the request carries the PI back to a checking host (not local strip).
 * </ul>
 * Blocks whose tuple is the unwritten escape ({@code app=0xFFFF}) are never corrupted: PI turns its
 * checks off for them by design; such chances are counted as {@code skippedEscape}.
 */
public final class FaultInjectingProvider implements BlockTransportProvider {
    public static final String NAME = "faulty";

    /** Where a bit is flipped. */
    public enum Site { HOST_REQUEST, HOST_RESPONSE, TARGET_REQUEST, TARGET_RESPONSE }

    /** What a run asks for. */
    public static final class Config {
        final String inner;
        final double rate;
        final Set<Site> sites;
        final Set<InjectTarget> fields;
        final long seed;

        public Config(String inner, double rate, Set<Site> sites, Set<InjectTarget> fields, long seed) {
            this.inner = inner;
            this.rate = rate;
            this.sites = EnumSet.copyOf(sites);
            this.fields = EnumSet.copyOf(fields);
            this.seed = seed;
        }
    }

    /** What a run did. */
    public static final class Counters {
        public final Map<String, LongAdder> injected = new ConcurrentHashMap<>();
        public final LongAdder skippedEscape = new LongAdder();

        void count(Site s, InjectTarget t) {
            injected.computeIfAbsent(s + "/" + t, k -> new LongAdder()).increment();
        }

        public long total() {
            return injected.values().stream().mapToLong(LongAdder::sum).sum();
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            injected.entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .forEach(e -> b.append(b.length() == 0 ? "" : " ").append(e.getKey()).append('=').append(e.getValue().sum()));
            return b + " skippedEscape=" + skippedEscape.sum();
        }
    }

    private static volatile Config config;
    private static volatile Counters counters = new Counters();
    private static Random random = new Random();

    /** Switches the transport on with {@code c}; returns fresh counters. */
    public static synchronized Counters enable(Config c) {
        config = c;
        random = new Random(c.seed);
        counters = new Counters();
        return counters;
    }

    public static synchronized void disable() {
        config = null;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability availability(TransportOptions options) {
        return config != null ? Availability.available()
                : Availability.unavailable("a test-only fault-injecting transport, switched off");
    }

    @Override
    public TransportCapabilities capabilities(TransportOptions options) {
        Config c = config;
        return Transports.find(c == null ? "local" : c.inner).capabilities(options);
    }

    @Override
    public String embeddedListenAddress() {
        return Transports.find(config.inner).embeddedListenAddress();
    }

    @Override
    public BlockTransport create(TransportOptions options) {
        Config c = config;
        BlockTransport inner = Transports.find(c.inner).create(options);
        Injector inj = new Injector(c, counters);
        return new BlockTransport() {
            @Override
            public TargetListener listen(String address, TargetHandler handler) throws IOException {
                return inner.listen(address, inj.wrap(handler));
            }

            @Override
            public HostConnection connect(String address, ConnectOptions options) throws IOException {
                return inj.wrap(inner.connect(address, options));
            }

            @Override
            public void close() {
                inner.close();
            }
        };
    }

    /** Decides and flips. */
    private static final class Injector {
        final Config c;
        final Counters n;
        volatile Map<String, BlockFormat> formats = Map.of();

        Injector(Config c, Counters n) {
            this.c = c;
            this.n = n;
        }

        void learn(List<VolumeInfo> vols) {
            Map<String, BlockFormat> m = new ConcurrentHashMap<>(formats);
            for (VolumeInfo v : vols) {
                m.put(v.name(), v.format());
            }
            formats = m;
        }

        /** Flips one bit of a field the request's checks cover, in a block that is not escaped; true if it did. */
        boolean maybeCorrupt(Site site, BlockRequest r) {
            if (!c.sites.contains(site) || !r.hasMetadata() || r.blocks() <= 0) {
                return false;
            }
            BlockFormat f = formats.get(r.volume());
            if (f == null || !f.hasPi()) {
                return false;
            }
            Protection p = r.protection();
            CheckFlags k = p.checks();
            InjectTarget t;
            long seed;
            synchronized (FaultInjectingProvider.class) {
                if (random.nextDouble() >= c.rate) {
                    return false;
                }
                InjectTarget[] ts = c.fields.toArray(new InjectTarget[0]);
                t = ts[random.nextInt(ts.length)];
                seed = random.nextLong();
            }
            boolean checked;
            switch (t) {
                case DATA:
                case GUARD: checked = k.guard(); break;
                case APP_TAG: checked = k.app() && (p.appMask() & 0xFFFF) != 0; break;
                default: checked = k.ref() && f.type() != io.pistore.integrity.PiType.TYPE_3; break;
            }
            if (!checked) {
                return false;
            }
            byte[] meta = r.metadata().toArray();
            for (int i = 0; i < r.blocks(); i++) {
                int app = f.tupleOffsetInMetadata() + f.guard().appTagOffset() + i * f.metadataSize();
                if ((meta[app] & 0xFF) == 0xFF && (meta[app + 1] & 0xFF) == 0xFF) {
                    n.skippedEscape.increment();
                    return false;
                }
            }
            PiContext ctx = PiContext.builder(f).build();
            Pi.injectError(ctx, r.data(), r.metadata(), r.blocks(), t, new Random(seed));
            n.count(site, t);
            return true;
        }

        TargetHandler wrap(TargetHandler h) {
            return new TargetHandler() {
                @Override
                public List<VolumeInfo> volumes() {
                    List<VolumeInfo> v = h.volumes();
                    learn(v);
                    return v;
                }

                @Override
                public void execute(BlockRequest r, io.pistore.spi.PiDuty checkedInTransport, Consumer<Completion> done) {
                    if (formats.isEmpty()) {
                        learn(h.volumes());
                    }
                    io.pistore.spi.PiDuty duty = checkedInTransport;
                    if (r.op() == Operation.WRITE && !duty.generates(io.pistore.spi.PiDuty.Hop.TARGET)
                            && maybeCorrupt(Site.TARGET_REQUEST, r)) {
                        // this hop may have corrupted it: no check made before it counts, the engine must check
                        io.pistore.spi.PiDuty asked = io.pistore.spi.PiDuty.of(r.protection());
                        duty = duty.generator() == null ? asked : asked.generatedBy(duty.generator());
                    }
                    h.execute(r, duty, comp -> {
                        if (r.op() == Operation.READ && comp.isSuccess()) {
                            maybeCorrupt(Site.TARGET_RESPONSE, r);
                        }
                        done.accept(comp);
                    });
                }

                @Override
                public void connected(String peer) {
                    h.connected(peer);
                }

                @Override
                public void disconnected(String peer, String reason) {
                    h.disconnected(peer, reason);
                }
            };
        }

        HostConnection wrap(HostConnection conn) {
            learn(conn.volumes());
            return new ForwardingHostConnection(conn) {
                @Override
                protected CompletableFuture<Completion> submit(HostQueue q, BlockRequest r) {
                    if (r.op() == Operation.WRITE && !r.protection().pract()) {
                        maybeCorrupt(Site.HOST_REQUEST, r);
                    }
                    CompletableFuture<Completion> f = q.submit(r);
                    if (r.op() != Operation.READ) {
                        return f;
                    }
                    return f.thenApply(comp -> {
                        if (comp.isSuccess()) {
                            maybeCorrupt(Site.HOST_RESPONSE, r);
                        }
                        return comp;
                    });
                }
            };
        }
    }
}
