package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.ReconnectingHostQueueTest.Connection;
import io.pistore.spi.ReconnectingHostQueueTest.Lines;
import io.pistore.spi.ReconnectingHostQueueTest.Queue;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A {@link ReconnectingHostQueue} following path states, on {@link ReconnectingHostQueueTest}'s
 * fakes: every move, drain check, reconnect and parked request's time-out runs when the test says,
 * so which connection a request ends on, and when an old connection is let go, are exact.
 */
class FollowingByHandTest {
    private static final List<String> PEERS = List.of("a", "b", "c");

    private static PathReport says(long counter, PathState s) {
        return new PathReport(counter, Map.of("v", s, "w", s));
    }

    private static CompletableFuture<Completion> flush(Queue q) {
        return q.submit(BlockRequest.flush("v"));
    }

    /** A queue on a, following {@code paths}. */
    private static Queue following(Lines log, PeerPaths paths) {
        Queue q = new Queue(log, PEERS).started();
        q.follow(paths);
        return q;
    }

    @Test
    void oneMoveAtATimeAndBackToTheFirstPeerWhenItIsOptimizedAgain() {
        Lines log = new Lines();
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(log, paths);
        assertTrue(q.attempts.isEmpty(), "nothing known: no move");
        paths.report(1, says(1, PathState.OPTIMIZED));
        paths.report(0, says(1, PathState.NON_OPTIMIZED));
        assertEquals(List.of(0L), q.delays, "a second change while a move is scheduled schedules none");
        q.runNextAttempt();
        assertEquals(1, q.now().peer);
        assertTrue(q.attempts.isEmpty(), "on the optimized peer: nothing more to do");

        paths.report(0, says(2, PathState.OPTIMIZED));
        assertTrue(q.attempts.isEmpty(), "b is still optimized: no move without a reason");
        paths.report(1, says(2, PathState.NON_OPTIMIZED));
        q.runNextAttempt();
        assertEquals(0, q.now().peer);
        assertEquals(2, q.moves());
        assertEquals(1, log.count("INFO pistore fake: moved from b to a (queue 3): a is optimized for v, w, b is non-optimized"),
                log.lines.toString());
        q.close();
    }

    @Test
    void aMoveTheTransportRefusedToScheduleDoesNotBlockTheNext() {
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(new Lines(), paths);
        q.transportClosing = true;
        paths.report(1, says(1, PathState.OPTIMIZED));
        assertTrue(q.attempts.isEmpty());
        assertFalse(q.closedNow(), "a refused move does not close the queue");
        q.transportClosing = false;
        paths.report(0, says(1, PathState.NON_OPTIMIZED));
        assertEquals(1, q.attempts.size());
        q.runNextAttempt();
        assertEquals(1, q.now().peer);
    }

    @Test
    void aChangeWhileMovingIsFollowedOnceTheMoveIsDone() {
        Lines log = new Lines();
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(log, paths);
        q.duringConnect = () -> {
            q.duringConnect = () -> { };
            paths.report(2, says(1, PathState.OPTIMIZED)); // c elected while the queue connects to b
            paths.report(1, says(2, PathState.NON_OPTIMIZED));
        };
        paths.report(1, says(1, PathState.OPTIMIZED));
        q.runNextAttempt();
        assertEquals(1, q.now().peer, "the move under way ends on b");
        assertEquals(1, q.attempts.size(), "and the change it missed schedules the next");
        q.runNextAttempt();
        assertEquals(2, q.now().peer);
        assertEquals(2, q.moves());
    }

    @Test
    void leavingAnUnreachablePeerLetsItsConnectionGoAtOnce() {
        Lines log = new Lines();
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(log, paths);
        Connection a = q.made.get(0);
        a.inFlight = 2;
        paths.unreachable(0);
        paths.report(1, says(1, PathState.OPTIMIZED));
        q.runNextAttempt();
        assertEquals(1, log.count("INFO pistore fake: moved from a to b (queue 3): b is optimized for v, w, a is unreachable"),
                log.lines.toString());
        assertTrue(a.released, "its requests cannot finish there: they fail and are sent again");
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void aConnectionLeftWithRequestsInFlightIsLetGoOnceTheyFinish() {
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(new Lines(), paths);
        q.drain = 3_600_000L;
        Connection a = q.made.get(0);
        a.inFlight = 2;
        paths.report(1, says(1, PathState.OPTIMIZED));
        q.runNextAttempt();
        assertFalse(a.released, "its requests finish there");
        assertEquals(List.of(0L, 5L), q.delays, "looked at again in 5 ms");
        q.runNextAttempt();
        assertFalse(a.released);
        a.inFlight = 0;
        q.runNextAttempt();
        assertTrue(a.released);
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void aConnectionLeftIsLetGoWhenTheTransportClosesTheQueueClosesOrTheDrainTimeIsOver() {
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(new Lines(), paths);
        q.drain = 3_600_000L;
        Connection a = q.made.get(0);
        a.inFlight = 1;
        paths.report(1, says(1, PathState.OPTIMIZED));
        q.runNextAttempt();
        q.transportClosing = true;
        q.runNextAttempt(); // the drain check cannot be scheduled again
        assertTrue(a.released);

        PeerPaths rp = new PeerPaths(PEERS);
        Queue r = following(new Lines(), rp);
        r.drain = 3_600_000L;
        Connection ra = r.made.get(0);
        ra.inFlight = 1;
        rp.report(2, says(1, PathState.OPTIMIZED));
        r.runNextAttempt();
        assertFalse(ra.released);
        r.close();
        assertFalse(ra.released, "close releases the connection in use");
        r.runNextAttempt();
        assertTrue(ra.released, "and the drain check the one left");

        PeerPaths sp = new PeerPaths(PEERS);
        Queue s = following(new Lines(), sp);
        s.drain = 0L;
        s.made.get(0).inFlight = 1;
        sp.report(1, says(1, PathState.OPTIMIZED));
        s.runNextAttempt();
        assertTrue(s.made.get(0).released, "no time to drain: let go at once");
    }

    @Test
    void afterCloseRequestsGoToTheClosedConnectionWhichFailsThem() {
        Queue q = following(new Lines(), new PeerPaths(PEERS));
        q.close();
        Completion c = flush(q).join();
        assertEquals("connection shut", c.message());
        assertTrue(q.attempts.isEmpty(), "nothing parked, nothing scheduled");
    }

    @Test
    void aTransportErrorFromTheConnectionInUseStandsAndAFencedAnswerIsSentAgain() {
        Queue q = following(new Lines(), new PeerPaths(PEERS));
        Connection a = q.made.get(0);
        a.next.add(Completion.failure(Status.TRANSPORT_ERROR, "the target's own answer"));
        assertEquals("the target's own answer", flush(q).join().message(), "the connection is fine: no resend");
        assertEquals(1, a.received.size());
        a.next.add(Completion.failure(Status.FENCED, "a newer copy came first"));
        assertEquals(Status.SUCCESS, flush(q).join().status(), "sent again on the connection in use");
        assertEquals(3, a.received.size());
        a.next.add(Completion.failure(Status.MEDIA_ERROR, "bad disk"));
        assertEquals("bad disk", flush(q).join().message());
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void anAnswerThatComesAfterCloseIsPassedOnAsItIs() {
        Queue q = following(new Lines(), new PeerPaths(PEERS));
        Connection a = q.made.get(0);
        a.hold = true;
        CompletableFuture<Completion> f = flush(q);
        q.close();
        a.pending.get(0).complete(Completion.failure(Status.TRANSPORT_ERROR, "closed under it"));
        assertEquals("closed under it", f.join().message());
    }

    @Test
    void aRequestItsLostConnectionFailedIsSentAgainOnTheNextOrFailsWhenItsWaitIsOver() {
        PeerPaths paths = new PeerPaths(PEERS);
        Queue q = following(new Lines(), paths);
        Connection a = q.made.get(0);
        a.hold = true;
        CompletableFuture<Completion> inFlight = flush(q);
        a.lose("reset");
        a.pending.get(0).complete(Completion.failure(Status.TRANSPORT_ERROR, "reset"));
        assertFalse(inFlight.isDone(), "parked");
        q.runNextAttempt(); // the reconnect, to b
        assertEquals(1, q.now().peer);
        assertEquals(Status.SUCCESS, inFlight.join().status());
        assertEquals(1, q.now().received.size());

        Queue r = new Queue(new Lines(), PEERS).started();
        r.failoverWait = 0L;
        r.follow(new PeerPaths(PEERS));
        Connection ra = r.made.get(0);
        ra.hold = true;
        CompletableFuture<Completion> late = flush(r);
        ra.lose("reset");
        ra.pending.get(0).complete(Completion.failure(Status.TRANSPORT_ERROR, "reset"));
        assertEquals("reset", late.join().message(), "no time to wait for another connection");
    }

    @Test
    void aParkedRequestIsNotFailedBeforeItsWaitIsOver() {
        Queue q = following(new Lines(), new PeerPaths(PEERS));
        q.down.add(1);
        q.made.get(0).lose("reset");
        CompletableFuture<Completion> parked = flush(q);
        assertEquals(2, q.delays.size(), "the reconnect, and the end of the request's wait");
        assertEquals(10L, q.delays.get(0));
        q.runLastAttempt(); // run early: its wait is not over
        assertFalse(parked.isDone(), "still within its wait");
        q.runNextAttempt(); // b refuses
        assertFalse(parked.isDone());
        q.runNextAttempt(); // c takes it
        assertEquals(2, q.now().peer);
        assertEquals(Status.SUCCESS, parked.join().status());
    }

    @Test
    void aParkedRequestFailsAtOnceWhenItsWaitCannotBeScheduled() {
        Queue q = following(new Lines(), new PeerPaths(PEERS));
        q.made.get(0).lose("reset");
        q.transportClosing = true;
        Completion c = flush(q).join();
        assertEquals(Status.TRANSPORT_ERROR, c.status());
        assertEquals("connection to a lost (reset); no peer took the request within 10000 ms", c.message());
    }
}
