package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A target's path states: the counter moves on each change, and a held query is answered once it does. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PathStateBoardTest {
    /** A handler whose volumes' states the test sets. */
    static class SettableStates implements TargetHandler {
        final Map<String, PathState> states = new ConcurrentHashMap<>();
        volatile List<String> names = List.of("a", "b");

        @Override
        public List<VolumeInfo> volumes() {
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
}
