package io.pistore.spi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A target's path states and change counter, for every transport that reports them to hosts (the
 * target half of the ANA model: the log page is {@link #current}, the asynchronous notice is a
 * query {@link #await held} until the counter moves).
 *
 * <p>The states are the handler's ({@link TargetHandler#pathState}); the counter moves by one each
 * time any volume's state, or the list of volumes, differs from what it was at the last look. Held
 * queries are looked at every {@code tickMillis} by one daemon thread, which runs only while some
 * are held, and are answered (on that thread) once the counter differs from the one the host knows
 * or their wait is over, whichever comes first. Thread-safe.
 */
public final class PathStateBoard implements AutoCloseable {
    private final TargetHandler handler;
    private final long tickMillis;
    private Map<String, PathState> last = Map.of();
    private long counter;
    private PathReport report;
    private final List<Held> held = new ArrayList<>();
    private Thread ticker;
    private boolean closed;

    private record Held(long known, long deadlineNanos, Consumer<PathReport> answer) {
    }

    public PathStateBoard(TargetHandler handler, long tickMillis) {
        if (tickMillis <= 0) {
            throw new IllegalArgumentException("tick of " + tickMillis + " ms");
        }
        this.handler = handler;
        this.tickMillis = tickMillis;
    }

    /** The states now, with the counter (moved if they changed since the last look). */
    public synchronized PathReport current() {
        look();
        return report;
    }

    private void look() {
        Map<String, PathState> now = new LinkedHashMap<>();
        for (VolumeInfo v : handler.volumes()) {
            PathState s;
            try {
                s = handler.pathState(v.name());
            } catch (RuntimeException e) {
                s = PathState.INACCESSIBLE; // a handler that cannot say cannot be relied on
            }
            now.put(v.name(), s == null ? PathState.INACCESSIBLE : s);
        }
        if (report == null || !now.equals(last)) {
            last = now;
            counter++;
            report = new PathReport(counter, now);
        }
    }

    /**
     * Answers with the states once the counter differs from {@code known} (at once if it does now; a
     * host that knows nothing sends 0), or after {@code maxWaitMillis} with the states then. The
     * answer runs on the calling thread when immediate, else on the board's thread; it must not block.
     * A closed board answers at once.
     */
    public void await(long known, long maxWaitMillis, Consumer<PathReport> answer) {
        PathReport now;
        synchronized (this) {
            look();
            now = report;
            if (now.counter() == known && maxWaitMillis > 0 && !closed) {
                held.add(new Held(known, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMillis), answer));
                if (ticker == null) {
                    ticker = new Thread(this::run, "pistore-path-states");
                    ticker.setDaemon(true);
                    ticker.start();
                }
                notifyAll();
                return;
            }
        }
        answer.accept(now);
    }

    /** Queries held now (tests). */
    public synchronized int held() {
        return held.size();
    }

    private void run() {
        while (true) {
            List<Held> due = new ArrayList<>();
            PathReport r;
            synchronized (this) {
                try {
                    while (held.isEmpty() && !closed) {
                        wait();
                    }
                    if (!closed) {
                        wait(tickMillis);
                    }
                } catch (InterruptedException e) {
                    closed = true;
                }
                look();
                r = report;
                long now = System.nanoTime();
                for (Iterator<Held> it = held.iterator(); it.hasNext(); ) {
                    Held h = it.next();
                    if (closed || h.known() != r.counter() || now - h.deadlineNanos() >= 0) {
                        due.add(h);
                        it.remove();
                    }
                }
            }
            for (Held h : due) {
                try {
                    h.answer().accept(r);
                } catch (RuntimeException e) {
                    System.getLogger("io.pistore.spi").log(System.Logger.Level.WARNING,
                            "pistore: answering a path state query failed", e);
                }
            }
            synchronized (this) {
                if (closed && held.isEmpty()) {
                    return;
                }
            }
        }
    }

    /** Answers every held query with the states now and stops the board's thread. */
    @Override
    public synchronized void close() {
        closed = true;
        notifyAll();
    }
}
