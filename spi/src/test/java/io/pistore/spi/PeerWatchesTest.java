package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link PeerWatches} on watches the test opens and ends by hand, with a scheduler that only records
 * what it was given: who is watched, what a lost watch makes of its peer, when it is opened again.
 */
class PeerWatchesTest {
    /** Scheduled tasks and their delays, run when the test says so. */
    final List<Runnable> tasks = new ArrayList<>();
    final List<Long> delays = new ArrayList<>();
    final ReconnectPolicy policy = new ReconnectPolicy(true, 7, 50, (task, delay) -> {
        tasks.add(task);
        delays.add(delay);
        return true;
    });

    static final class Watch implements PeerWatches.Watch {
        final int peer;
        final PeerPaths paths;
        final Runnable gone;
        boolean stopped;

        Watch(int peer, PeerPaths paths, Runnable gone) {
            this.peer = peer;
            this.paths = paths;
            this.gone = gone;
        }

        @Override
        public void stop() {
            stopped = true;
        }
    }

    final List<Watch> opened = new ArrayList<>();
    final boolean[] refuse = new boolean[3];

    PeerWatches.Opener opener = (peer, paths, gone) -> {
        if (refuse[peer]) {
            throw new IOException("refused");
        }
        Watch w = new Watch(peer, paths, gone);
        opened.add(w);
        return w;
    };

    private void runTasks() {
        List<Runnable> now = new ArrayList<>(tasks);
        tasks.clear();
        now.forEach(Runnable::run);
    }

    @Test
    void everyPeerIsWatchedAndWhatAWatchReportsIsKnown() {
        PeerWatches w = new PeerWatches(List.of("A", "B", "C"), opener, policy);
        assertEquals(3, opened.size());
        assertEquals(List.of("A", "B", "C"), w.paths().peers());
        opened.get(1).paths.report(1, new PathReport(3, Map.of("v", PathState.OPTIMIZED)));
        assertEquals(PathState.OPTIMIZED, w.paths().state(1, "v"));
        assertNull(w.paths().state(0, "v"), "peer A said nothing yet");
        assertTrue(tasks.isEmpty());
    }

    @Test
    void aLostWatchMakesItsPeerUnreachableAndIsOpenedAgainAfterTheFirstDelay() {
        PeerWatches w = new PeerWatches(List.of("A", "B"), opener, policy);
        opened.get(0).paths.report(0, new PathReport(1, Map.of("v", PathState.OPTIMIZED)));
        opened.get(0).gone.run();
        assertTrue(w.paths().isUnreachable(0));
        assertEquals(PathState.INACCESSIBLE, w.paths().state(0, "v"));
        assertEquals(List.of(7L), delays);
        runTasks();
        assertEquals(3, opened.size());
        assertEquals(0, opened.get(2).peer);
    }

    @Test
    void aWatchThatCannotBeOpenedIsTriedAgainUntilItOpens() {
        refuse[1] = true;
        PeerWatches w = new PeerWatches(List.of("A", "B"), opener, policy);
        assertEquals(1, opened.size());
        assertTrue(w.paths().isUnreachable(1));
        runTasks();
        assertEquals(1, opened.size(), "still refused");
        assertEquals(1, tasks.size(), "and tried again");
        refuse[1] = false;
        runTasks();
        assertEquals(2, opened.size());
        assertEquals(1, opened.get(1).peer);
        assertTrue(tasks.isEmpty());
    }

    @Test
    void closeStopsEveryWatchAndNoneIsOpenedAgain() {
        PeerWatches w = new PeerWatches(List.of("A", "B"), opener, policy);
        opened.get(1).gone.run();
        w.close();
        assertTrue(opened.get(0).stopped);
        assertFalse(opened.get(1).stopped, "a watch gone before the close is not stopped again");
        runTasks();
        assertEquals(2, opened.size(), "no watch opened after the close");
        opened.get(0).gone.run();
        assertTrue(tasks.isEmpty(), "a watch gone after the close is not opened again");
    }

    @Test
    void aWatchOpenedWhileTheHostClosesIsStopped() {
        PeerWatches[] w = new PeerWatches[1];
        boolean[] closeWhileOpening = new boolean[1];
        List<Watch> made = new ArrayList<>();
        w[0] = new PeerWatches(List.of("A"), (peer, paths, gone) -> {
            if (closeWhileOpening[0]) {
                w[0].close();
            }
            Watch x = new Watch(peer, paths, gone);
            made.add(x);
            return x;
        }, policy);
        made.get(0).gone.run();
        closeWhileOpening[0] = true;
        runTasks();
        assertEquals(2, made.size());
        assertTrue(made.get(1).stopped, "opened while close() ran: stopped at once");
    }

    @Test
    void theDelayDoublesUpToTheLongest() {
        ReconnectPolicy p = new ReconnectPolicy(true, 100, 1000, (t, d) -> true);
        assertEquals(100, p.delayBefore(1));
        assertEquals(200, p.delayBefore(2));
        assertEquals(800, p.delayBefore(4));
        assertEquals(1000, p.delayBefore(5));
        assertEquals(1000, p.delayBefore(60));
        assertThrows(IllegalArgumentException.class, () -> new ReconnectPolicy(true, 0, 10, (t, d) -> true));
        assertThrows(IllegalArgumentException.class, () -> new ReconnectPolicy(true, 10, 0, (t, d) -> true));
    }
}
