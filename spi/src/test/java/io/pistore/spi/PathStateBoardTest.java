package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A target's path states: the counter moves on each change, and a held query is answered once it does. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PathStateBoardTest {
    private static final String TICKER = "pistore-path-states";

    private static Set<Thread> tickers() {
        Set<Thread> t = new HashSet<>();
        for (Thread x : Thread.getAllStackTraces().keySet()) {
            if (x.getName().equals(TICKER)) {
                t.add(x);
            }
        }
        return t;
    }

    /** The board thread started since {@code before} was taken. */
    private static Thread startedSince(Set<Thread> before) {
        Set<Thread> now = tickers();
        now.removeAll(before);
        assertEquals(1, now.size(), "one board thread started: " + now);
        return now.iterator().next();
    }

    /** Waits (a hang guard, not a timing) until {@code t} is in state {@code s}. */
    private static void awaitState(Thread t, Thread.State s) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (t.getState() != s) {
            assertTrue(System.nanoTime() < end, "the board thread never got " + s + ", it is " + t.getState());
            Thread.yield();
        }
    }

    /** A handler whose volumes' states the test sets. */
    static class SettableStates implements TargetHandler {
        final Map<String, PathState> states = new ConcurrentHashMap<>();
        volatile List<String> names = List.of("a", "b");
        /** One permit per look the board's own thread took. */
        final Semaphore tickerLooks = new Semaphore(0);

        @Override
        public List<VolumeInfo> volumes() {
            if (Thread.currentThread().getName().equals(TICKER)) {
                tickerLooks.release();
            }
            return names.stream().map(n -> new VolumeInfo(n, 8, BlockFormat.parse("512+8"))).toList();
        }

        @Override
        public PathState pathState(String volume) {
            return states.getOrDefault(volume, PathState.OPTIMIZED);
        }

        @Override
        public void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done) {
            done.accept(Completion.failure(Status.INTERNAL_ERROR, "not here"));
        }
    }

    @Test
    void theCounterMovesExactlyWhenAStateOrTheListChanges() {
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            PathReport first = b.current();
            assertEquals(Map.of("a", PathState.OPTIMIZED, "b", PathState.OPTIMIZED), first.states());
            assertEquals(first.counter(), b.current().counter(), "nothing changed");
            h.states.put("b", PathState.NON_OPTIMIZED);
            PathReport second = b.current();
            assertEquals(first.counter() + 1, second.counter());
            assertEquals(PathState.NON_OPTIMIZED, second.state("b"));
            h.names = List.of("a");
            PathReport third = b.current();
            assertEquals(second.counter() + 1, third.counter());
            assertEquals(PathState.INACCESSIBLE, third.state("b"), "a volume no longer listed");
        }
    }

    @Test
    void aQueryWithAnOldCounterIsAnsweredAtOnce() throws Exception {
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            CompletableFuture<PathReport> f = new CompletableFuture<>();
            b.await(0, 60_000, f::complete);
            assertTrue(f.isDone(), "a host that knows nothing is answered on the calling thread");
            assertEquals(0, b.held());
        }
    }

    @Test
    void aHeldQueryIsAnsweredWhenTheStateChanges() throws Exception {
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            long known = b.current().counter();
            CompletableFuture<PathReport> f = new CompletableFuture<>();
            b.await(known, 60_000, f::complete);
            assertFalse(f.isDone());
            assertEquals(1, b.held());
            h.states.put("a", PathState.INACCESSIBLE);
            PathReport r = f.get(10, TimeUnit.SECONDS); // long before the query's own wait
            assertNotEquals(known, r.counter());
            assertEquals(PathState.INACCESSIBLE, r.state("a"));
        }
    }

    @Test
    void aHeldQueryIsAnsweredUnchangedWhenItsWaitIsOver() throws Exception {
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            long known = b.current().counter();
            CompletableFuture<PathReport> f = new CompletableFuture<>();
            b.await(known, 50, f::complete);
            assertEquals(known, f.get(10, TimeUnit.SECONDS).counter());
        }
    }

    @Test
    void closingAnswersWhatIsHeld() throws Exception {
        SettableStates h = new SettableStates();
        PathStateBoard b = new PathStateBoard(h, 5);
        long known = b.current().counter();
        CompletableFuture<PathReport> f = new CompletableFuture<>();
        b.await(known, 60_000, f::complete);
        b.close();
        assertEquals(known, f.get(10, TimeUnit.SECONDS).counter());
        CompletableFuture<PathReport> g = new CompletableFuture<>();
        b.await(known, 60_000, g::complete);
        assertTrue(g.isDone(), "a closed board holds nothing");
    }

    @Test
    void aHandlerThatFailsReportsTheVolumeInaccessible() {
        SettableStates h = new SettableStates() {
            @Override
            public PathState pathState(String volume) {
                if (volume.equals("b")) {
                    throw new IllegalStateException("broken");
                }
                return super.pathState(volume);
            }
        };
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            assertEquals(PathState.INACCESSIBLE, b.current().state("b"));
            assertEquals(PathState.OPTIMIZED, b.current().state("a"));
        }
    }

    @Test
    void aTickOfZeroOrLessIsRefused() {
        SettableStates h = new SettableStates();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PathStateBoard(h, 0));
        assertEquals("tick of 0 ms", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PathStateBoard(h, -5));
        new PathStateBoard(h, 1).close();
    }

    @Test
    void aQueryThatWillNotWaitIsAnsweredAtOnceEvenWithTheCurrentCounter() {
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            long known = b.current().counter();
            for (long wait : new long[] {0, -1}) {
                CompletableFuture<PathReport> f = new CompletableFuture<>();
                b.await(known, wait, f::complete);
                assertTrue(f.isDone(), "a wait of " + wait + " ms holds nothing");
                assertEquals(known, f.join().counter());
                assertEquals(0, b.held());
            }
        }
    }

    @Test
    void aHeldQueryStaysHeldWhileNothingChangesAndItsWaitLasts() throws Exception {
        SettableStates h = new SettableStates();
        PathStateBoard b = new PathStateBoard(h, 5);
        long known = b.current().counter();
        CompletableFuture<PathReport> f = new CompletableFuture<>();
        b.await(known, 600_000, f::complete);
        assertTrue(h.tickerLooks.tryAcquire(3, 10, TimeUnit.SECONDS), "the board thread looks each tick");
        assertFalse(f.isDone(), "three looks, no change, the wait not over");
        assertEquals(1, b.held());
        b.close();
        assertEquals(known, f.get(10, TimeUnit.SECONDS).counter());
    }

    @Test
    void aHeldQueryIsAnsweredOnceOnTheBoardsDaemonThread() throws Exception {
        SettableStates h = new SettableStates();
        PathStateBoard b = new PathStateBoard(h, 5);
        Set<Thread> before = tickers();
        long known = b.current().counter();
        AtomicInteger answers = new AtomicInteger();
        CompletableFuture<Thread> on = new CompletableFuture<>();
        b.await(known, 600_000, r -> {
            answers.incrementAndGet();
            on.complete(Thread.currentThread());
        });
        Thread ticker = startedSince(before);
        h.states.put("a", PathState.NON_OPTIMIZED);
        assertSame(ticker, on.get(10, TimeUnit.SECONDS));
        assertTrue(ticker.isDaemon(), "the board's thread never keeps a JVM alive");
        assertEquals(0, b.held(), "an answered query is no longer held");
        h.states.put("a", PathState.OPTIMIZED); // another change: nobody waits for it
        b.current();
        b.close();
        ticker.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(ticker.isAlive());
        assertEquals(1, answers.get(), "each query is answered once");
    }

    @Test
    void theBoardsThreadRestsWhileNothingIsHeldAndWakesForTheNextQuery() throws Exception {
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            Set<Thread> before = tickers();
            CompletableFuture<PathReport> first = new CompletableFuture<>();
            b.await(b.current().counter(), 600_000, first::complete);
            Thread ticker = startedSince(before);
            h.states.put("a", PathState.NON_OPTIMIZED);
            long known = first.get(10, TimeUnit.SECONDS).counter();
            awaitState(ticker, Thread.State.WAITING); // no tick while nothing is held
            CompletableFuture<PathReport> second = new CompletableFuture<>();
            b.await(known, 600_000, second::complete);
            assertEquals(1, b.held());
            h.states.put("b", PathState.INACCESSIBLE);
            PathReport r = second.get(10, TimeUnit.SECONDS);
            assertEquals(known + 1, r.counter());
            assertEquals(PathState.INACCESSIBLE, r.state("b"));
            assertTrue(ticker.isAlive(), "the same thread answered");
        }
    }

    @Test
    void closingEndsTheBoardsThreadWhileItRests() throws Exception {
        SettableStates h = new SettableStates();
        PathStateBoard b = new PathStateBoard(h, 5);
        Set<Thread> before = tickers();
        CompletableFuture<PathReport> f = new CompletableFuture<>();
        b.await(b.current().counter(), 600_000, f::complete);
        Thread ticker = startedSince(before);
        h.states.put("a", PathState.INACCESSIBLE);
        f.get(10, TimeUnit.SECONDS);
        awaitState(ticker, Thread.State.WAITING);
        b.close();
        ticker.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(ticker.isAlive(), "closed with nothing held: the thread ends");
    }

    @Test
    void theBoardsThreadWaitsATickBeforeEachLook() throws Exception {
        SettableStates h = new SettableStates();
        PathStateBoard b = new PathStateBoard(h, TimeUnit.HOURS.toMillis(1));
        Set<Thread> before = tickers();
        long known = b.current().counter();
        CompletableFuture<PathReport> f = new CompletableFuture<>();
        b.await(known, 600_000, f::complete);
        Thread ticker = startedSince(before);
        awaitState(ticker, Thread.State.TIMED_WAITING); // its tick, an hour
        assertFalse(f.isDone());
        assertEquals(1, b.held());
        h.states.put("a", PathState.NON_OPTIMIZED);
        b.close(); // cuts the tick short: the held query is answered with the states now
        PathReport r = f.get(10, TimeUnit.SECONDS);
        assertEquals(PathState.NON_OPTIMIZED, r.state("a"));
        assertEquals(known + 1, r.counter());
        ticker.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(ticker.isAlive());
    }

    @Test
    void anAnswerThatFailsIsLoggedAndTheOthersAreStillAnswered() throws Exception {
        Logger log = Logger.getLogger("io.pistore.spi");
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler keep = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        boolean parents = log.getUseParentHandlers();
        log.addHandler(keep);
        log.setUseParentHandlers(false);
        SettableStates h = new SettableStates();
        try (PathStateBoard b = new PathStateBoard(h, 5)) {
            long known = b.current().counter();
            IllegalStateException boom = new IllegalStateException("a host's answer broke");
            b.await(known, 600_000, r -> {
                throw boom;
            });
            CompletableFuture<PathReport> f = new CompletableFuture<>();
            b.await(known, 600_000, f::complete);
            h.states.put("b", PathState.NON_OPTIMIZED);
            assertEquals(PathState.NON_OPTIMIZED, f.get(10, TimeUnit.SECONDS).state("b"));
            assertEquals(1, records.size(), "one warning: " + records);
            LogRecord r = records.get(0);
            assertEquals(Level.WARNING, r.getLevel());
            assertEquals("pistore: answering a path state query failed", r.getMessage());
            assertSame(boom, r.getThrown());
        } finally {
            log.removeHandler(keep);
            log.setUseParentHandlers(parents);
        }
    }
}
