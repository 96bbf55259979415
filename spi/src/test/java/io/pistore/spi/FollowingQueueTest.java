package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link ReconnectingHostQueue} following path states ({@link ReconnectingHostQueue#follow}), on
 * connections the test answers by hand: it moves to the optimized peer, lets what is in flight on
 * the old one finish there, and sends again what a lost connection failed instead of failing it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FollowingQueueTest {
    static final List<VolumeInfo> VOLUMES = List.of(new VolumeInfo("v", 64, BlockFormat.parse("512+8")));
    final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor();

    /** One connection: its requests wait until the test answers them. */
    static final class Conn implements HostQueue {
        final int peer;
        final List<CompletableFuture<Completion>> pending = new CopyOnWriteArrayList<>();
        /** The requests it was given, as given. */
        final List<BlockRequest> requests = new CopyOnWriteArrayList<>();
        volatile boolean shut;
        volatile Consumer<String> lost;
        /** What the queue had this connection stamp on its writes. */
        volatile WriteFence fence;

        Conn(int peer) {
            this.peer = peer;
        }

        @Override
        public CompletableFuture<Completion> submit(BlockRequest request) {
            if (shut) {
                return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR, "closed"));
            }
            CompletableFuture<Completion> f = new CompletableFuture<>();
            requests.add(request);
            pending.add(f);
            return f;
        }

        @Override
        public int depth() {
            return 8;
        }

        @Override
        public int inFlight() {
            return (int) pending.stream().filter(f -> !f.isDone()).count();
        }

        void answerAll() {
            answerAll(Completion.success());
        }

        void answerAll(Completion c) {
            for (CompletableFuture<Completion> f : pending) {
                f.complete(c);
            }
        }

        /** Closes with every pending request failed, as a transport does. */
        void close(boolean lostHere) {
            shut = true;
            for (CompletableFuture<Completion> f : pending) {
                f.complete(Completion.failure(Status.TRANSPORT_ERROR, "connection closed"));
            }
            if (lostHere && lost != null) {
                lost.accept("killed");
            }
        }
    }

    final class Queue extends ReconnectingHostQueue<Conn> {
        final List<Conn> made = new CopyOnWriteArrayList<>();
        final boolean[] down = new boolean[3];
        final long wait;

        Queue(Conn first, long wait) {
            super("test", System.getLogger("test"), List.of("A", "B", "C"), first.peer, 0);
            this.wait = wait;
            made.add(first);
            start(first);
        }

        @Override
        protected Conn connect(int peer) throws IOException {
            if (down[peer]) {
                throw new IOException("refused");
            }
            Conn c = new Conn(peer);
            made.add(c);
            return c;
        }

        @Override
        protected boolean isShut(Conn c) {
            return c.shut;
        }

        @Override
        protected void onLost(Conn c, Consumer<String> lost) {
            c.lost = lost;
        }

        @Override
        protected void release(Conn c) {
            c.close(false);
        }

        @Override
        protected boolean schedule(Runnable attempt, long delayMillis) {
            thread.schedule(attempt, delayMillis, TimeUnit.MILLISECONDS);
            return true;
        }

        @Override
        protected boolean reconnectEnabled() {
            return true;
        }

        @Override
        protected long reconnectDelayMillis() {
            return 1;
        }

        @Override
        protected long reconnectMaxDelayMillis() {
            return 10;
        }

        @Override
        protected List<VolumeInfo> volumesOf(Conn c) {
            return VOLUMES;
        }

        @Override
        protected void screenAnswers(Conn c, AnswerScreen screen) {
        }

        @Override
        protected void fence(Conn c, WriteFence f) {
            c.fence = f;
        }

        @Override
        protected void drop(Conn c, String reason) {
            c.close(true);
        }

        @Override
        protected long failoverWaitMillis() {
            return wait;
        }

        Conn now() {
            return current();
        }
    }

    @AfterEach
    void tearDown() {
        thread.shutdownNow();
    }

    private static PathReport says(PathState s) {
        return new PathReport(1 + s.ordinal(), Map.of("v", s));
    }

    private static BlockRequest flush() {
        return BlockRequest.flush("v");
    }

    /** Waits on the queue's thread until what was scheduled before has run (no sleep). */
    private void settle() throws Exception {
        for (int i = 0; i < 3; i++) {
            thread.submit(() -> { }).get(10, TimeUnit.SECONDS);
        }
    }

    private void awaitPeer(Queue q, String peer) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // a hang guard
        // the peer's name changes just before its connection becomes the current one: wait for both
        int index = List.of("A", "B", "C").indexOf(peer);
        while (!q.peer().equals(peer) || q.now() == null || q.now().peer != index) {
            assertTrue(System.nanoTime() < end, "never on " + peer + ", on " + q.peer());
            settle();
        }
    }

    @Test
    void itMovesToTheOptimizedPeerAndWhatWasInFlightFinishesOnTheOldOne() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 5_000);
        PeerPaths paths = new PeerPaths(List.of("A", "B", "C"));
        q.follow(paths);
        CompletableFuture<Completion> before = q.submit(flush());
        paths.report(0, says(PathState.NON_OPTIMIZED));
        paths.report(1, says(PathState.OPTIMIZED));
        awaitPeer(q, "B");
        assertEquals(1, q.moves());
        assertFalse(a.shut, "the old connection stays while a request is in flight there");
        CompletableFuture<Completion> after = q.submit(flush());
        assertEquals(1, q.now().pending.size(), "new requests go to B");
        a.answerAll();
        assertTrue(before.get(10, TimeUnit.SECONDS).isSuccess(), "answered on A");
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!a.shut) {
            assertTrue(System.nanoTime() < end, "A never closed once drained");
            settle();
        }
        q.now().answerAll();
        assertTrue(after.get(10, TimeUnit.SECONDS).isSuccess());
        q.close();
    }

    /**
     * Each connection the queue takes up carries the queue's fence key and an epoch one higher; a
     * write the old connection's peer refused as a stale copy (FENCED: the new connection's write
     * came first) is sent again on the current connection, not failed.
     */
    @Test
    void eachConnectionCarriesAHigherEpochAndAFencedAnswerIsSentAgain() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 5_000);
        assertEquals(1, a.fence.epoch());
        assertTrue(a.fence.key() != 0);
        assertEquals(a.fence, q.currentFence());
        PeerPaths paths = new PeerPaths(List.of("A", "B", "C"));
        q.follow(paths);
        CompletableFuture<Completion> stale = q.submit(BlockRequest.writeZeroes("v", 0, 1, false));
        paths.report(0, says(PathState.NON_OPTIMIZED));
        paths.report(1, says(PathState.OPTIMIZED));
        awaitPeer(q, "B");
        Conn b = q.now();
        assertEquals(new WriteFence(a.fence.key(), 2), b.fence, "same stream, the next epoch");
        assertEquals(b.fence, q.currentFence());
        a.answerAll(Completion.failure(Status.FENCED, "stale copy"));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (b.pending.isEmpty()) {
            assertTrue(System.nanoTime() < end, "the fenced write never reached B");
            settle();
        }
        assertFalse(stale.isDone(), "not failed: sent again");
        long seq = a.requests.get(0).fence().seq();
        assertTrue(seq >= 1, "the queue numbers its writes: " + a.requests.get(0));
        assertEquals(seq, b.requests.get(0).fence().seq(), "the copy sent again keeps the write's number");
        CompletableFuture<Completion> next = q.submit(BlockRequest.writeZeroes("v", 1, 1, false));
        assertEquals(seq + 1, b.requests.get(1).fence().seq(), "the next write, the next number");
        b.answerAll();
        assertTrue(next.get(10, TimeUnit.SECONDS).isSuccess());
        assertTrue(stale.get(10, TimeUnit.SECONDS).isSuccess());
        // a reconnect after a loss takes the next epoch as well
        b.close(true);
        long end2 = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (q.now() == b) {
            assertTrue(System.nanoTime() < end2, "never reconnected");
            settle();
        }
        assertEquals(3, q.now().fence.epoch());
        q.close();
    }

    @Test
    void aRequestItsLostConnectionFailedIsSentAgainOnTheNext() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 10_000);
        PeerPaths paths = new PeerPaths(List.of("A", "B", "C"));
        q.follow(paths);
        CompletableFuture<Completion> inFlight = q.submit(flush());
        a.close(true); // killed
        CompletableFuture<Completion> meanwhile = q.submit(flush());
        awaitPeer(q, "B"); // round robin: the next peer
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (q.now().pending.size() < 2) {
            assertTrue(System.nanoTime() < end, "the two requests never reached B: " + q.now().pending.size());
            settle();
        }
        q.now().answerAll();
        assertTrue(inFlight.get(10, TimeUnit.SECONDS).isSuccess(), "no error for the request in flight at the kill");
        assertTrue(meanwhile.get(10, TimeUnit.SECONDS).isSuccess(), "none for the one sent while reconnecting");
        assertEquals(0, q.moves());
        q.close();
    }

    @Test
    void aReconnectGoesToTheOptimizedPeerFirst() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 10_000);
        PeerPaths paths = new PeerPaths(List.of("A", "B", "C"));
        q.follow(paths);
        paths.report(0, says(PathState.OPTIMIZED));
        paths.report(1, says(PathState.NON_OPTIMIZED));
        paths.report(2, says(PathState.NON_OPTIMIZED));
        settle();
        assertEquals("A", q.peer(), "on the optimized peer already");
        paths.unreachable(0);
        paths.report(2, says(PathState.OPTIMIZED)); // C elected
        a.close(true);
        awaitPeer(q, "C");
        q.close();
    }

    @Test
    void aParkedRequestFailsOnceItsWaitIsOver() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 200);
        q.down[1] = true;
        q.down[2] = true;
        PeerPaths paths = new PeerPaths(List.of("A", "B", "C"));
        q.follow(paths);
        q.down[0] = true;
        a.close(true);
        Completion c = q.submit(flush()).get(10, TimeUnit.SECONDS);
        assertEquals(Status.TRANSPORT_ERROR, c.status());
        assertTrue(c.message().contains("no peer took the request within 200 ms"), c.message());
        q.close();
    }

    @Test
    void withoutPathStatesALostConnectionFailsItsRequests() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 10_000);
        CompletableFuture<Completion> inFlight = q.submit(flush());
        // every peer refuses, so the queue is still reconnecting at the second submit (a reconnect
        // 1 ms later would give it a connection that never answers)
        java.util.Arrays.fill(q.down, true);
        a.close(true);
        assertEquals(Status.TRANSPORT_ERROR, inFlight.get(10, TimeUnit.SECONDS).status());
        assertEquals(Status.TRANSPORT_ERROR, q.submit(flush()).get(10, TimeUnit.SECONDS).status(),
                "at once while reconnecting");
        q.close();
    }

    @Test
    void closingFailsWhatIsParked() throws Exception {
        Conn a = new Conn(0);
        Queue q = new Queue(a, 60_000);
        q.down[1] = true;
        q.down[2] = true;
        q.down[0] = true;
        q.follow(new PeerPaths(List.of("A", "B", "C")));
        a.close(true);
        CompletableFuture<Completion> parked = q.submit(flush());
        assertFalse(parked.isDone());
        q.close();
        assertEquals(Status.TRANSPORT_ERROR, parked.get(10, TimeUnit.SECONDS).status());
    }
}
