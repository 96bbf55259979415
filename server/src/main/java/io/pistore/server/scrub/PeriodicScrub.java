package io.pistore.server.scrub;

import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Scrubs the served volumes in the background, again and again, as ZFS and Ceph scrub what they
 * store: each pass starts {@code every} after the last one ended and reads every volume of the store
 * whole, at most {@code bytesPerSecond} of data, checking the stored PI as {@code pistore scrub}
 * does (the reads go through the volume as requests do: each block checked whole, in one version,
 * under its lock). What it finds goes to the log, one line per bad block (the first
 * {@value #MAX_LINES} of a volume in a pass) and one summary line per volume, and to the figures the
 * metrics read. A replicated volume is scrubbed by the peer that leads it when its turn comes (the
 * others skip it): every replica is checked and a bad copy rewritten from a good one, as
 * {@code pistore scrub --replicas} does, each repair logged by the volume. Volumes created meanwhile
 * join the next pass, and one deleted during its scrub ends it with a line.
 */
public final class PeriodicScrub implements AutoCloseable {
    /** Bad-block lines logged per volume and pass; all are counted. */
    static final int MAX_LINES = 100;

    /**
     * What the passes found in one volume: the last completed pass's counts (for a replicated volume,
     * bad copies over its replicas) and when it ended.
     */
    public record Figures(long passes, long checkedBlocks, long badBlocks, long completedEpochSeconds) {
    }

    private final VolumeStore store;
    private final long everyNanos;
    private final long bytesPerSecond;
    private final Consumer<String> log;
    private final Map<String, Figures> figures = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closed;
    /** The volume being scrubbed now, or null between them. */
    private volatile String current;

    private PeriodicScrub(VolumeStore store, Duration every, long bytesPerSecond, Consumer<String> log) {
        this.store = store;
        this.everyNanos = every.toNanos();
        this.bytesPerSecond = bytesPerSecond;
        this.log = log;
        this.thread = new Thread(this::run, "pistore-scrub");
        this.thread.setDaemon(true);
    }

    /** Starts scrubbing {@code store}'s volumes every {@code every}, at most {@code bytesPerSecond}. */
    public static PeriodicScrub start(VolumeStore store, Duration every, long bytesPerSecond, Consumer<String> log) {
        if (every.isNegative() || every.isZero()) {
            throw new IllegalArgumentException("the scrub interval must be positive, not " + every);
        }
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("the scrub rate must be positive, not " + bytesPerSecond);
        }
        PeriodicScrub s = new PeriodicScrub(store, every, bytesPerSecond, log);
        s.thread.start();
        return s;
    }

    /** The volume being scrubbed now, or null (waiting for the next pass, between two volumes). */
    public String current() {
        return current;
    }

    /** The figures of each volume scrubbed at least once, by name. */
    public Map<String, Figures> figures() {
        return Map.copyOf(figures);
    }

    private void run() {
        while (waitNanos(everyNanos)) {
            for (Volume v : store.list()) {
                if (closed) {
                    return;
                }
                io.pistore.replication.volume.ReplicatedVolume r = store.storage(v.name())
                        instanceof io.pistore.replication.volume.ReplicatedVolume rv ? rv : null;
                if (r != null && r.pathState() != io.pistore.spi.PathState.OPTIMIZED) {
                    continue; // the peer that leads it scrubs it
                }
                current = v.name();
                if (r != null) {
                    scrubReplicas(r);
                } else {
                    scrub(v);
                }
                current = null;
            }
        }
    }

    private void scrub(Volume v) {
        StringWriter text = new StringWriter();
        Scrubber.Report r;
        try {
            r = Scrubber.scrub(v, new PrintWriter(text), MAX_LINES, paced(v));
        } catch (Stopped e) {
            return;
        } catch (IOException | RuntimeException | InternalError e) { // InternalError: a fault in mapped memory
            log.accept("scrub: " + v.name() + ": stopped: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            return;
        }
        for (String line : text.toString().lines().toList()) {
            log.accept("scrub: " + v.name() + ": " + line);
        }
        record(v.name(), r.blocks, r.badBlocks);
    }

    /** A replicated volume: every replica checked, bad copies rewritten from good ones. */
    private void scrubReplicas(io.pistore.replication.volume.ReplicatedVolume v) {
        io.pistore.replication.volume.ReplicaScrubReport r;
        try {
            r = v.scrub(paced(v));
        } catch (Stopped e) {
            return;
        } catch (IOException | RuntimeException | InternalError e) { // InternalError: a fault in mapped memory
            log.accept("scrub: " + v.name() + ": stopped: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            return;
        }
        long bad = r.badCopies.values().stream().mapToLong(Long::longValue).sum();
        r.unreachable.forEach((id, why) -> log.accept("scrub: " + v.name() + ": replica " + id + " not checked: " + why));
        log.accept("scrub: " + v.name() + ": " + r.summary(v.format(), v.group().getPeers().stream()
                .map(p -> p.getId().toString()).toList(), MAX_LINES));
        record(v.name(), r.blocks, bad);
    }

    /**
     * The progress callback of a scrub of {@code v} starting now: it waits as long as keeps the scrub
     * to the rate, and ends the scrub (throwing {@link Stopped}) once this closes.
     */
    private java.util.function.LongConsumer paced(Volume v) {
        long start = System.nanoTime();
        long bytesPerBlock = v.format().blockSize();
        return done -> {
            long pause = pauseNanos(done * bytesPerBlock, bytesPerSecond, System.nanoTime() - start);
            if (pause > 0 && !waitNanos(pause)) {
                throw new Stopped();
            }
        };
    }

    private void record(String name, long checked, long bad) {
        Figures before = figures.get(name);
        figures.put(name, new Figures(before == null ? 1 : before.passes() + 1, checked, bad,
                System.currentTimeMillis() / 1000));
    }

    /**
     * How long to wait after {@code bytes} were checked in {@code elapsedNanos} to keep to
     * {@code bytesPerSecond}: the time those bytes take at that rate, less the time they took.
     */
    static long pauseNanos(long bytes, long bytesPerSecond, long elapsedNanos) {
        long due = (long) (bytes * 1e9 / bytesPerSecond);
        return Math.max(0, due - elapsedNanos);
    }

    /** Waits {@code nanos} unless closed first; whether it may go on. */
    private synchronized boolean waitNanos(long nanos) {
        long until = System.nanoTime() + nanos;
        try {
            for (long left = nanos; !closed && left > 0; left = until - System.nanoTime()) {
                wait(Math.max(1, left / 1_000_000), 0);
            }
        } catch (InterruptedException e) {
            return false;
        }
        return !closed;
    }

    /** Stops scrubbing (a volume being scrubbed is left at its next chunk) and waits for the thread. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ends a volume's scrub from its progress callback once the scrubber closed. */
    private static final class Stopped extends RuntimeException {
        Stopped() {
            super(null, null, false, false);
        }
    }
}
