package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Which peer a host sends I/O to, from what each peer reported of its paths. */
class PeerPathsTest {
    private static final Set<String> V = Set.of("v");

    private static PathReport report(long counter, PathState s) {
        return new PathReport(counter, Map.of("v", s, "w", PathState.OPTIMIZED));
    }

    @Test
    void nothingIsOptimizedUntilAPeerSaysSo() {
        PeerPaths p = new PeerPaths(List.of("A", "B", "C"));
        assertEquals(-1, p.optimized(V, 0));
        assertNull(p.state(0, "v"));
        assertEquals(false, p.known(0));
        p.unreachable(1);
        assertEquals(true, p.known(1));
        p.report(0, report(1, PathState.NON_OPTIMIZED));
        p.report(1, report(1, PathState.INACCESSIBLE));
        assertEquals(-1, p.optimized(V, 0));
        p.report(2, report(1, PathState.OPTIMIZED));
        assertEquals(2, p.optimized(V, 0));
    }

    @Test
    void theCurrentPeerStaysWhileItIsOptimizedAndTheNewestNewsWinsOtherwise() {
        PeerPaths p = new PeerPaths(List.of("A", "B", "C"));
        p.report(0, report(1, PathState.OPTIMIZED));
        p.report(1, report(1, PathState.OPTIMIZED)); // a new leader, the old one not yet told
        assertEquals(0, p.optimized(V, 0), "no move without a reason");
        assertEquals(1, p.optimized(V, 2), "elsewhere, the newer report wins");
        p.report(0, report(2, PathState.NON_OPTIMIZED));
        assertEquals(1, p.optimized(V, 0));
    }

    @Test
    void anUnreachablePeerServesNothingUntilItReportsAgain() {
        PeerPaths p = new PeerPaths(List.of("A", "B"));
        p.report(0, report(1, PathState.OPTIMIZED));
        p.unreachable(0);
        assertEquals(PathState.INACCESSIBLE, p.state(0, "v"));
        assertEquals(-1, p.optimized(V, 0));
        p.report(0, report(1, PathState.OPTIMIZED));
        assertEquals(0, p.optimized(V, 1));
    }

    @Test
    void everyVolumeUsedMustBeOptimizedThere() {
        PeerPaths p = new PeerPaths(List.of("A", "B"));
        p.report(0, report(1, PathState.OPTIMIZED));
        assertEquals(-1, p.optimized(Set.of("v", "x"), 1), "x is not served there");
        assertEquals(0, p.optimized(Set.of("v", "w"), 1));
    }

    @Test
    void listenersRunOnEveryChangeOnly() {
        PeerPaths p = new PeerPaths(List.of("A", "B"));
        AtomicInteger n = new AtomicInteger();
        p.onChange(n::incrementAndGet);
        p.report(0, report(1, PathState.OPTIMIZED));
        p.report(0, report(1, PathState.OPTIMIZED));
        assertEquals(1, n.get(), "the same report again is no change");
        p.unreachable(0);
        p.unreachable(0);
        assertEquals(2, n.get());
        p.report(0, report(1, PathState.OPTIMIZED));
        assertEquals(3, n.get(), "reachable again");
    }

    @Test
    void aRemovedListenerRunsNoMore() {
        PeerPaths p = new PeerPaths(List.of("A"));
        AtomicInteger n = new AtomicInteger();
        Runnable l = n::incrementAndGet;
        p.onChange(l);
        p.report(0, report(1, PathState.OPTIMIZED));
        p.removeListener(l);
        p.report(0, report(2, PathState.NON_OPTIMIZED));
        assertEquals(1, n.get());
        assertEquals(PathState.NON_OPTIMIZED, p.state(0, "v"), "the change itself is kept");
    }

    @Test
    void theNewestOfSeveralOptimizedPeersWinsWhateverItsPlaceInTheList() {
        PeerPaths p = new PeerPaths(List.of("A", "B", "C"));
        p.report(1, report(1, PathState.OPTIMIZED));
        p.report(0, report(1, PathState.OPTIMIZED)); // the first peer's news is the newer
        assertEquals(0, p.optimized(V, 2));
        assertEquals(0, p.optimized(V, -1), "no current peer");
        p.report(2, report(1, PathState.OPTIMIZED));
        assertEquals(2, p.optimized(V, -1));
        assertEquals(1, p.optimized(V, 1), "the current peer stays while optimized");
    }

    @Test
    void aCurrentPeerOutsideTheListIsNoCurrentPeer() {
        PeerPaths p = new PeerPaths(List.of("A", "B", "C"));
        p.report(1, report(1, PathState.OPTIMIZED));
        assertEquals(1, p.optimized(V, 3));
        assertEquals(1, p.optimized(V, -1));
        assertEquals(-1, p.optimized(Set.of(), 1), "no volume in use: nothing to follow");
    }

    @Test
    void losingOtherPeersCountsAsNewsInTheOrderOfChanges() {
        PeerPaths p = new PeerPaths(List.of("A", "B", "C", "D"));
        p.report(0, report(1, PathState.OPTIMIZED));
        p.report(1, report(1, PathState.OPTIMIZED));
        p.unreachable(2);
        p.unreachable(3);
        p.report(0, report(2, PathState.OPTIMIZED)); // A's news is now the newest of all
        assertEquals(0, p.optimized(V, 2));
        p.unreachable(0);
        assertEquals(1, p.optimized(V, 2), "the one still reachable");
        assertEquals(true, p.isUnreachable(0));
        assertEquals(false, p.isUnreachable(1));
    }

    @Test
    void itNamesEachPeerWithWhatIsKnownOfIt() {
        PeerPaths p = new PeerPaths(List.of("A", "B", "C"));
        assertEquals(List.of("A", "B", "C"), p.peers());
        assertEquals("A=unknown, B=unknown, C=unknown", p.toString());
        p.report(0, new PathReport(3, Map.of("v", PathState.NON_OPTIMIZED)));
        p.unreachable(2);
        assertEquals("A={v=NON_OPTIMIZED}, B=unknown, C=unreachable", p.toString());
    }
}
