package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@link ReconnectingPeerQueue}: the reconnect loop over {@link PeerConnection}s, with the policy's
 * delays and scheduler; each scheduled attempt runs when the test says.
 */
class ReconnectingPeerQueueTest {
    private static final List<VolumeInfo> VOLUMES = List.of(new VolumeInfo("v", 16, BlockFormat.of(512, 8)));

    /** A connection to one peer; the test loses it, and reads what the queue asked of it. */
    static final class Link implements PeerConnection {
        final int peer;
        List<VolumeInfo> listed = VOLUMES;
        Completion answer = Completion.success();
        boolean shut;
        boolean shutDown;
        String dropped;
        Consumer<String> lost;
        AnswerScreen screen;
        WriteFence fence;

        Link(int peer) {
            this.peer = peer;
        }

        @Override
        public CompletableFuture<Completion> submit(BlockRequest request) {
            if (shut) {
                return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR, "link " + peer + " shut"));
            }
            return CompletableFuture.completedFuture(screen == null ? answer : screen.screen(request.volume(), answer));
        }

        @Override
        public int depth() {
            return 4;
        }

        @Override
        public int inFlight() {
            return 0;
        }

        @Override
        public List<VolumeInfo> listed() {
            return listed;
        }

        @Override
        public void screen(AnswerScreen s) {
            screen = s;
        }

        @Override
        public void drop(String reason) {
            dropped = reason;
            shut = true;
            lost.accept(reason);
        }

        @Override
        public boolean isShut() {
            return shut;
        }

        @Override
        public void onLost(Consumer<String> l) {
            lost = l;
        }

        @Override
        public void shutdown() {
            shut = true;
            shutDown = true;
        }

        @Override
        public void fence(WriteFence f) {
            fence = f;
        }

        void lose(String why) {
            shut = true;
            lost.accept(why);
        }
    }

    /** Attempts the policy's scheduler was handed, with their delays. */
    static final class Hand implements ReconnectPolicy.Scheduler {
        final Deque<Runnable> tasks = new ArrayDeque<>();
        final List<Long> delays = new ArrayList<>();
        boolean closing;

        @Override
        public boolean schedule(Runnable task, long delayMillis) {
            if (closing) {
                return false;
            }
            tasks.add(task);
            delays.add(delayMillis);
            return true;
        }
    }

    static final class Queue extends ReconnectingPeerQueue<Link> {
        final List<Link> made = new ArrayList<>();
        /** What the peers list from now on. */
        List<VolumeInfo> listing = VOLUMES;

        Queue(List<String> peers, ReconnectPolicy policy) {
            super("fake", System.getLogger("test"), peers, 0, 0, policy);
            Link first = new Link(0);
            made.add(first);
            start(first);
        }

        @Override
        protected Link connect(int peer) {
            Link l = new Link(peer);
            l.listed = listing;
            made.add(l);
            return l;
        }
    }

    @Test
    void aLostConnectionIsMadeAgainAfterThePolicysDelaysOnItsScheduler() {
        Hand hand = new Hand();
        Queue q = new Queue(List.of("a"), new ReconnectPolicy(true, 7, 20, hand));
        Link first = q.connection();
        assertSame(q.made.get(0), first);
        assertEquals(new WriteFence(q.currentFence().key(), 1), first.fence, "stamped before it carries anything");
        assertNull(first.screen, "one peer: answers are not screened");
        assertTrue(q.submit(BlockRequest.flush("v")).join().isSuccess());

        first.lose("reset");
        assertEquals(List.of(7L), hand.delays);
        Completion refused = q.submit(BlockRequest.flush("v")).join();
        assertEquals("connection to a lost (reset); reconnecting", refused.message(), "the link reads as shut");
        hand.tasks.removeFirst().run();
        Link second = q.connection();
        assertEquals(2, q.made.size());
        assertSame(q.made.get(1), second);
        assertEquals(2, second.fence.epoch());
        assertEquals(1, q.reconnects());
        assertTrue(q.submit(BlockRequest.flush("v")).join().isSuccess());

        q.close();
        assertTrue(second.shutDown, "closing shuts the link down");
    }

    @Test
    void withAListAPeerWithoutTheVolumeIsDroppedThroughTheLink() {
        Hand hand = new Hand();
        Queue q = new Queue(List.of("a", "b"), new ReconnectPolicy(true, 5, 5, hand));
        Link a = q.connection();
        assertTrue(a.screen != null, "a list of peers: answers are screened");
        a.answer = Completion.failure(Status.NO_SUCH_VOLUME, "no v");
        Completion moved = q.submit(BlockRequest.flush("v")).join();
        assertEquals(Status.TRANSPORT_ERROR, moved.status());
        assertEquals("a has no volume v", a.dropped);
        assertEquals(List.of(5L), hand.delays);
        hand.tasks.removeFirst().run();
        assertEquals(1, q.connection().peer);
        assertEquals("b", q.peer());
    }

    @Test
    void aPeerListingAVolumeInAnotherFormatIsShutDownAndTheNextAttemptWaitsLonger() {
        Hand hand = new Hand();
        Queue q = new Queue(List.of("a"), new ReconnectPolicy(true, 5, 8, hand));
        q.connection().lose("reset");
        hand.tasks.removeFirst().run(); // the fake connects with the same volumes: adopted
        assertEquals(1, q.reconnects());
        // of a list of peers, one holding the volume in another format
        Queue other = new Queue(List.of("a", "b"), new ReconnectPolicy(true, 5, 8, hand));
        other.listing = List.of(new VolumeInfo("v", 16, BlockFormat.of(4096, 8)));
        hand.delays.clear();
        other.connection().lose("reset");
        hand.tasks.removeFirst().run();
        assertTrue(other.made.get(1).shutDown, "released through the link");
        assertSame(other.made.get(0), other.connection());
        assertEquals(List.of(5L, 5L), hand.delays);
        hand.tasks.removeFirst().run();
        assertEquals(List.of(5L, 5L, 8L), hand.delays, "doubled, at most the longest");
        assertEquals(0, other.reconnects());
    }

    @Test
    void aDisabledPolicyLeavesTheLostConnectionInPlace() {
        Hand hand = new Hand();
        Queue q = new Queue(List.of("a", "b"), new ReconnectPolicy(false, 5, 5, hand));
        Link a = q.connection();
        a.answer = Completion.failure(Status.NO_SUCH_VOLUME, "no v");
        assertEquals(Status.NO_SUCH_VOLUME, q.submit(BlockRequest.flush("v")).join().status(), "not moving: it stands");
        assertFalse(a.shut);
        a.lose("reset");
        assertTrue(hand.tasks.isEmpty());
        assertEquals("link 0 shut", q.submit(BlockRequest.flush("v")).join().message());
    }

    @Test
    void aSchedulerThatRefusesEndsTheQueue() {
        Hand hand = new Hand();
        hand.closing = true;
        Queue q = new Queue(List.of("a"), new ReconnectPolicy(true, 5, 5, hand));
        q.connection().lose("reset");
        assertTrue(hand.tasks.isEmpty());
        assertEquals("link 0 shut", q.submit(BlockRequest.flush("v")).join().message(),
                "no reconnect under way: the lost link answers");
    }
}
