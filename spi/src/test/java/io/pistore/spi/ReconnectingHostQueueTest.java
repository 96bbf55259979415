package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The reconnect and failover loop every host transport shares, driven by hand: connections are
 * fakes whose loss the test causes, and each scheduled attempt runs when the test says, so the
 * order of events and the delays asked for are exact.
 */
class ReconnectingHostQueueTest {
    private static final List<VolumeInfo> VOLUMES = List.of(new VolumeInfo("v", 64, BlockFormat.of(4096, 8)),
            new VolumeInfo("w", 32, BlockFormat.of(512, 8)));

    /** One fake connection to one peer. */
    static final class Connection implements HostQueue {
        final int peer;
        /** What the peer lists: at connect, and to a relist (a test changes it to model a change there). */
        volatile List<VolumeInfo> volumes;
        final Map<String, Completion> answers;
        final List<BlockRequest> received = new ArrayList<>();
        volatile boolean shut;
        volatile int inFlight;
        boolean released;
        Consumer<String> lost;
        AnswerScreen screen;

        Connection(int peer, List<VolumeInfo> volumes, Map<String, Completion> answers) {
            this.peer = peer;
            this.volumes = volumes;
            this.answers = answers;
        }

        /** Answers to give before those of {@link #answers}, once each. */
        final Deque<Completion> next = new ArrayDeque<>();
        /** Whether requests wait in {@link #pending} until the test completes them. */
        boolean hold;
        final List<CompletableFuture<Completion>> pending = new ArrayList<>();

        @Override
        public CompletableFuture<Completion> submit(BlockRequest request) {
            received.add(request);
            if (shut) {
                return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR, "connection shut"));
            }
            if (hold) {
                CompletableFuture<Completion> f = new CompletableFuture<>();
                pending.add(f);
                return f;
            }
            Completion once = next.poll();
            Completion c = once != null ? once : answers.getOrDefault(request.volume(), Completion.success());
            return CompletableFuture.completedFuture(screen == null ? c : screen.screen(request.volume(), c));
        }

        @Override
        public int depth() {
            return 8;
        }

        @Override
        public int inFlight() {
            return inFlight;
        }

        /** The peer went away: the connection tells its listener once. */
        void lose(String why) {
            shut = true;
            lost.accept(why);
        }
    }

    /** The queue over fake connections; attempts wait in {@link #attempts} until the test runs them. */
    static final class Queue extends ReconnectingHostQueue<Connection> {
        final Map<Integer, List<VolumeInfo>> listed = new HashMap<>();
        final Map<Integer, Map<String, Completion>> answers = new HashMap<>();
        final Set<Integer> down = new HashSet<>();
        final Deque<Runnable> attempts = new ArrayDeque<>();
        final List<Long> delays = new ArrayList<>();
        final List<Connection> made = new ArrayList<>();
        boolean transportClosing;
        boolean reconnect = true;
        /** Runs inside {@link #connect}, before the connection is made. */
        Runnable duringConnect = () -> { };
        final List<Connection> reconnectingFrom = new ArrayList<>();
        /** Runs when a connection is stamped with its fence, just before the queue takes it up. */
        Runnable duringFence = () -> { };
        /** How long requests wait for a peer while following path states; null: the default. */
        Long failoverWait;
        /** How long a connection left by a move keeps its requests; null: the default. */
        Long drain;

        Queue(Lines log, List<String> peers) {
            super("fake", log, peers, 0, 3);
        }

        Queue started() {
            Connection first = new Connection(0, listed.getOrDefault(0, VOLUMES), answers.getOrDefault(0, Map.of()));
            made.add(first);
            start(first);
            return this;
        }

        void runNextAttempt() {
            attempts.removeFirst().run();
        }

        void runLastAttempt() {
            attempts.removeLast().run();
        }

        @Override
        protected void fence(Connection c, WriteFence f) {
            duringFence.run();
        }

        @Override
        protected long failoverWaitMillis() {
            return failoverWait == null ? super.failoverWaitMillis() : failoverWait;
        }

        @Override
        protected long drainMillis() {
            return drain == null ? super.drainMillis() : drain;
        }

        Connection now() {
            return current();
        }

        boolean closedNow() {
            return isClosed();
        }

        long waitForAPeer() {
            return failoverWaitMillis();
        }

        @Override
        protected Connection connect(int peer) throws IOException, InterruptedException {
            duringConnect.run();
            if (Thread.interrupted()) {
                throw new InterruptedException("the transport is closing");
            }
            if (down.contains(peer)) {
                throw new IOException("peer " + peer + " refused");
            }
            Connection c = new Connection(peer, listed.getOrDefault(peer, VOLUMES),
                    answers.computeIfAbsent(peer, k -> new HashMap<>()));
            made.add(c);
            return c;
        }

        @Override
        protected boolean isShut(Connection c) {
            return c.shut;
        }

        @Override
        protected void onLost(Connection c, Consumer<String> lost) {
            c.lost = lost;
        }

        @Override
        protected void release(Connection c) {
            c.released = true;
            c.shut = true;
        }

        @Override
        protected boolean schedule(Runnable attempt, long delayMillis) {
            if (transportClosing) {
                return false;
            }
            attempts.addLast(attempt);
            delays.add(delayMillis);
            return true;
        }

        @Override
        protected boolean reconnectEnabled() {
            return reconnect;
        }

        @Override
        protected void beforeReconnecting(Connection lost) {
            reconnectingFrom.add(lost);
        }

        @Override
        protected long reconnectDelayMillis() {
            return 10;
        }

        @Override
        protected long reconnectMaxDelayMillis() {
            return 40;
        }

        @Override
        protected List<VolumeInfo> volumesOf(Connection c) {
            return c.volumes;
        }

        @Override
        protected void screenAnswers(Connection c, AnswerScreen screen) {
            c.screen = screen;
        }

        @Override
        protected void drop(Connection c, String reason) {
            c.lose(reason);
        }
    }

    /** The log lines the queue writes, with their levels. */
    static final class Lines implements System.Logger {
        final List<String> lines = new ArrayList<>();

        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + format);
        }

        long count(String part) {
            return lines.stream().filter(l -> l.contains(part)).count();
        }
    }

    private static Completion submit(Queue q, String volume) {
        return q.submit(BlockRequest.flush(volume)).join();
    }

    /** Submits a request of {@code volume} that the connection in use answers {@code answer}. */
    private static Completion submitAnswered(Queue q, String volume, Completion answer) {
        q.now().next.add(answer);
        return submit(q, volume);
    }

    @Test
    void whileUpRequestsGoStraightToTheConnection() {
        Queue q = new Queue(new Lines(), List.of("a")).started();
        assertEquals(Status.SUCCESS, submit(q, "v").status());
        assertEquals(1, q.made.get(0).received.size());
        assertEquals(8, q.depth());
        q.now().inFlight = 3;
        assertEquals(3, q.inFlight());
        assertEquals("a", q.peer());
        assertEquals(10_000, q.waitForAPeer(), "requests wait 10 s for a peer by default");
        assertTrue(q.attempts.isEmpty(), "nothing to reconnect");
    }

    @Test
    void aLostConnectionFailsNewRequestsAndFailsOverToTheNextPeer() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        q.made.get(0).lose("reset");
        Completion refused = submit(q, "v");
        assertEquals(Status.TRANSPORT_ERROR, refused.status());
        assertEquals("connection to a lost (reset); reconnecting", refused.message());
        assertEquals(List.of(10L), q.delays, "the first attempt waits the reconnect delay");

        q.runNextAttempt();
        assertEquals(1, q.now().peer, "round robin: the peer after the one lost");
        assertEquals("b", q.peer());
        assertEquals(1, q.reconnects());
        assertEquals(1, log.count("INFO pistore fake: failed over from a to b (queue 3) after 1 attempt"), log.lines.toString());
        assertEquals(Status.SUCCESS, submit(q, "v").status());
        assertEquals(1, q.made.get(1).received.size(), "the new connection carries the requests");
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void failedAttemptsBackOffDoublingToTheMostAndLogTheFirstAndEveryTenth() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a")).started();
        q.down.add(0);
        q.made.get(0).lose("reset");
        for (int i = 0; i < 12; i++) {
            q.runNextAttempt();
        }
        assertEquals(List.of(10L, 10L, 20L, 40L, 40L, 40L, 40L, 40L, 40L, 40L, 40L, 40L, 40L), q.delays);
        assertEquals(2, log.count("cannot reconnect to a"), log.lines.toString());
        assertEquals(List.of(q.made.get(0)), q.reconnectingFrom, "told of the lost connection once, not per attempt");
        assertEquals(1, log.count("attempt 10: peer 0 refused"), log.lines.toString());
        assertEquals(Status.TRANSPORT_ERROR, submit(q, "v").status());

        q.down.clear();
        q.runNextAttempt();
        assertEquals(1, log.count("INFO pistore fake: reconnected to a (queue 3) after 13 attempts"), log.lines.toString());
        assertEquals(1, q.reconnects());
        assertEquals(Status.SUCCESS, submit(q, "v").status());
    }

    @Test
    void aSingleTargetIsTakenAsItListsNowWithVolumesCreatedGrownOrGone() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a")).started();
        VolumeInfo grown = new VolumeInfo("v", 128, BlockFormat.of(4096, 8));
        VolumeInfo created = new VolumeInfo("x", 8, BlockFormat.of(512, 0));
        q.listed.put(0, List.of(grown, created));
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertEquals(1, q.reconnects());
        assertSame(q.made.get(1), q.now());
        assertEquals(1, log.count("INFO pistore fake: reconnected to a (queue 3) after 1 attempt; it now lists: now "
                + grown + "; new x; gone w"), log.lines.toString());
        assertEquals(List.of(grown, created), q.volumes());
        assertEquals(Status.SUCCESS, submit(q, "v").status());
        assertEquals(Status.SUCCESS, submit(q, "x").status());
        assertEquals(0, log.count("WARNING"), log.lines.toString());
    }

    @Test
    void aSingleTargetsVolumeInAnotherFormatIsRefusedUntilRelisted() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a")).started();
        VolumeInfo other = new VolumeInfo("v", 64, BlockFormat.of(4096, 16));
        q.listed.put(0, List.of(other, VOLUMES.get(1)));
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertEquals(1, q.reconnects(), "the target is used: its other volumes are as known");
        Completion refused = submit(q, "v");
        assertEquals(Status.NO_SUCH_VOLUME, refused.status());
        assertEquals("volume v is now 4096+16 type=1 guard=crc64 pi=first on the target, not 4096+8 type=1 guard=crc16 "
                + "pi=first as this host knew it: open it again", refused.message());
        assertEquals(0, q.made.get(1).received.size(), "nothing of v reached the target");
        assertEquals(Status.SUCCESS, submit(q, "w").status());
        assertEquals(List.of(other, VOLUMES.get(1)), q.relistVolumes().join());
        assertEquals(Status.SUCCESS, submit(q, "v").status(), "the application asked for the list: it knows the format");
    }

    @Test
    void aRelistLearnsAVolumeAndAListFollowsItFromPeerToPeer() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        VolumeInfo created = new VolumeInfo("x", 8, BlockFormat.of(512, 8));
        Completion none = Completion.failure(Status.NO_SUCH_VOLUME, "no volume x");
        assertSame(none, submitAnswered(q, "x", none), "a name the queue never heard listed: the answer stands");
        assertFalse(q.made.get(0).shut);
        q.made.get(0).volumes = List.of(VOLUMES.get(0), VOLUMES.get(1), created);
        assertEquals(3, q.relistVolumes().join().size());
        Completion moved = submitAnswered(q, "x", none);
        assertEquals("a has no volume x; moving to another peer of a,b", moved.message(), "now it is one the queue uses");
        q.runNextAttempt();
        assertEquals(1, q.now().peer);
        assertEquals(1, log.count("failed over from a to b (queue 3) after 1 attempt: a has no volume x; it now lists: gone x"),
                log.lines.toString());
    }

    @Test
    void aPeerWithoutAVolumeIsLeftForTheNextUntilEveryPeerLacksIt() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b"));
        Completion none = Completion.failure(Status.NO_SUCH_VOLUME, "no volume v");
        q.answers.put(0, Map.of("v", none));
        q.answers.put(1, Map.of("v", none));
        q.started();

        Completion moved = submit(q, "v");
        assertEquals(Status.TRANSPORT_ERROR, moved.status());
        assertEquals("a has no volume v; moving to another peer of a,b", moved.message());
        assertTrue(q.made.get(0).shut, "the connection to a is dropped");
        q.runNextAttempt();
        assertEquals(1, q.now().peer);
        assertEquals(1, log.count("failed over from a to b (queue 3) after 1 attempt: a has no volume v"),
                log.lines.toString());

        Completion everywhere = submit(q, "v");
        assertSame(none, everywhere, "every peer lacks it: the answer stands");
        assertFalse(q.made.get(1).shut, "and the queue stays");
        assertEquals(Status.SUCCESS, submit(q, "w").status());
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void anAnswerForTheVolumeForgetsThePeersFoundWithoutIt() {
        Queue q = new Queue(new Lines(), List.of("a", "b"));
        Completion none = Completion.failure(Status.NO_SUCH_VOLUME, "no volume v");
        q.answers.put(0, Map.of("v", none));
        q.started();
        assertEquals(Status.TRANSPORT_ERROR, submit(q, "v").status()); // a lacks v
        q.runNextAttempt(); // on b, which has it
        assertEquals(Status.SUCCESS, submit(q, "v").status()); // forgets that a lacked it
        q.now().answers.put("v", none); // b loses it too (the fake reads its answers live)
        Completion moved = submit(q, "v");
        assertEquals(Status.TRANSPORT_ERROR, moved.status(), "a is not counted any more: the queue moves on");
    }

    @Test
    void aListOfOnePassesNoSuchVolumeThroughAndStays() {
        Queue q = new Queue(new Lines(), List.of("a"));
        Completion none = Completion.failure(Status.NO_SUCH_VOLUME, "no volume v");
        q.answers.put(0, Map.of("v", none));
        q.started();
        assertSame(none, submit(q, "v"));
        assertFalse(q.made.get(0).shut);
        assertEquals(null, q.made.get(0).screen, "one peer: the transport is not asked to screen answers");
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void closeStopsReconnectingAndReleasesTheConnection() {
        Queue q = new Queue(new Lines(), List.of("a", "b")).started();
        q.made.get(0).lose("reset");
        assertFalse(q.closedNow());
        q.close();
        assertTrue(q.closedNow());
        assertTrue(q.made.get(0).released);
        q.runNextAttempt();
        assertEquals(1, q.made.size(), "no attempt connects after close");
        assertEquals(0, q.reconnects());
    }

    @Test
    void aTransportThatIsClosingRefusesTheAttemptAndTheQueueStops() {
        Queue q = new Queue(new Lines(), List.of("a")).started();
        q.transportClosing = true;
        q.made.get(0).lose("reset");
        assertTrue(q.attempts.isEmpty());
        assertTrue(q.closedNow(), "the queue counts as closed");
        assertEquals(Status.TRANSPORT_ERROR, submit(q, "v").status(), "the lost connection fails what it gets");
        assertEquals(1, q.made.get(0).received.size(), "handed to the connection, no reconnect under way");
    }

    @Test
    void aPeerOfAListThatLacksAVolumeIsPassedOverForTheNext() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b", "c")).started();
        q.listed.put(1, List.of(VOLUMES.get(0))); // b has v only
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertTrue(q.made.get(1).released, "the connection to b is not kept");
        assertEquals(1, log.count("INFO pistore fake: passed over b (queue 3): it has no volume w"), log.lines.toString());
        assertEquals(0, q.reconnects());
        assertEquals(List.of(10L, 10L), q.delays);
        q.runNextAttempt();
        assertEquals(2, q.now().peer, "the next in turn");
        assertEquals(1, log.count("INFO pistore fake: failed over from a to c (queue 3) after 2 attempts"), log.lines.toString());
        assertEquals(List.of(q.made.get(0)), q.reconnectingFrom, "told once, at the first attempt, of the lost one");
    }

    @Test
    void aPeerWithoutAVolumeIsTakenOnceEveryPeerIsFoundWithoutIt() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        q.listed.put(0, List.of(VOLUMES.get(0)));
        q.listed.put(1, List.of(VOLUMES.get(0)));
        q.made.get(0).lose("reset");
        q.runNextAttempt(); // b lacks w: passed over
        assertEquals(0, q.reconnects());
        q.runNextAttempt(); // a lacks it too: w is nowhere, v is on a
        assertEquals(1, q.reconnects());
        assertEquals(0, q.now().peer);
        assertEquals(1, log.count("INFO pistore fake: reconnected to a (queue 3) after 2 attempts"), log.lines.toString());
        assertEquals(Status.SUCCESS, submit(q, "v").status());
    }

    @Test
    void aPeerOfAListThatListsAVolumeInAnotherFormatIsNotUsed() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        q.listed.put(1, List.of(new VolumeInfo("v", 64, BlockFormat.of(512, 8)), VOLUMES.get(1)));
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertTrue(q.made.get(1).released);
        assertEquals(1, log.count("WARNING pistore fake: reconnected to b (queue 3) but it lists a volume this queue uses in "
                + "another format (v is 512+8 type=1 guard=crc16 pi=first, not 4096+8 type=1 guard=crc16 pi=first); not using it"),
                log.lines.toString());
        q.runNextAttempt();
        assertEquals(0, q.now().peer, "round robin back to a, which lists what it did");
        assertEquals(1, q.reconnects());
    }

    @Test
    void aPeerOfAListWithAnotherSizeOrAnExtraVolumeIsUsed() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        q.listed.put(1, List.of(new VolumeInfo("v", 128, BlockFormat.of(4096, 8)), VOLUMES.get(1),
                new VolumeInfo("x", 8, BlockFormat.of(512, 8))));
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertEquals(1, q.reconnects());
        assertEquals(1, q.now().peer);
        assertEquals(Status.SUCCESS, submit(q, "v").status());
        assertEquals(0, log.count("WARNING"), log.lines.toString());
    }

    @Test
    void withoutReconnectingTheLostConnectionGetsTheRequestsAndAnswersStand() {
        Queue q = new Queue(new Lines(), List.of("a", "b"));
        q.reconnect = false;
        Completion none = Completion.failure(Status.NO_SUCH_VOLUME, "no volume v");
        q.answers.put(0, Map.of("v", none));
        q.started();
        assertSame(none, submit(q, "v"), "a queue that does not move passes the answer on");
        assertFalse(q.made.get(0).shut);
        PeerPaths paths = new PeerPaths(List.of("a", "b"));
        q.follow(paths);
        paths.report(1, new PathReport(1, Map.of("v", PathState.OPTIMIZED, "w", PathState.OPTIMIZED)));
        assertTrue(q.attempts.isEmpty(), "nor does it follow path states");
        q.made.get(0).lose("reset");
        assertTrue(q.attempts.isEmpty(), "no reconnect");
        Completion c = submit(q, "w");
        assertEquals("connection shut", c.message(), "the lost connection answers for itself");
        assertEquals(2, q.made.get(0).received.size());
        assertEquals(0, q.moves());
    }

    @Test
    void anAttemptInterruptedByTheTransportClosingEndsTheReconnecting() {
        Queue q = new Queue(new Lines(), List.of("a", "b")).started();
        q.duringConnect = () -> Thread.currentThread().interrupt();
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertFalse(Thread.currentThread().isInterrupted());
        assertTrue(q.attempts.isEmpty(), "no further attempt");
        assertEquals(1, q.made.size());
        assertEquals(0, q.reconnects());
    }

    @Test
    void aConnectionMadeAfterCloseIsReleased() {
        Queue q = new Queue(new Lines(), List.of("a", "b")).started();
        q.duringConnect = q::close;
        q.made.get(0).lose("reset");
        q.runNextAttempt();
        assertEquals(2, q.made.size());
        assertTrue(q.made.get(1).released, "closed while connecting: the new connection is let go");
        assertSame(q.made.get(0), q.now());
        assertEquals(0, q.reconnects());
        assertTrue(q.attempts.isEmpty());
    }

    @Test
    void followingMovesAtOnceToAPeerAlreadyOptimized() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        PeerPaths paths = new PeerPaths(List.of("a", "b"));
        paths.report(1, new PathReport(1, Map.of("v", PathState.OPTIMIZED, "w", PathState.OPTIMIZED)));
        q.follow(paths);
        assertEquals(List.of(0L), q.delays, "a move is scheduled when following starts");
        q.runNextAttempt();
        assertEquals(1, q.moves());
        assertEquals(1, q.now().peer);
        assertEquals(1, log.count("INFO pistore fake: moved from a to b (queue 3): b is optimized for v, w, a is unknown"),
                log.lines.toString());
        assertTrue(q.made.get(0).released, "nothing in flight on a: let go at once");
        assertTrue(q.attempts.isEmpty());
        q.close();
    }

    @Test
    void thePathsFollowedAreThoseOfTheVolumesItsRequestsName() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        PeerPaths paths = new PeerPaths(List.of("a", "b"));
        q.follow(paths);
        paths.report(0, new PathReport(1, Map.of("v", PathState.OPTIMIZED, "w", PathState.NON_OPTIMIZED)));
        paths.report(1, new PathReport(1, Map.of("v", PathState.NON_OPTIMIZED, "w", PathState.OPTIMIZED)));
        while (!q.attempts.isEmpty()) {
            q.runNextAttempt();
        }
        assertEquals(0, q.moves(), "before any request, every known volume counts: no peer leads both");
        assertEquals(Status.SUCCESS, submit(q, "w").status());
        paths.report(1, new PathReport(2, Map.of("v", PathState.NON_OPTIMIZED, "w", PathState.OPTIMIZED)));
        while (!q.attempts.isEmpty()) {
            q.runNextAttempt();
        }
        assertEquals(1, q.moves());
        assertEquals(1, q.now().peer);
        assertEquals(1, log.count("INFO pistore fake: moved from a to b (queue 3): b is optimized for w, a is non-optimized"),
                log.lines.toString());
        q.close();
    }

    @Test
    void aMoveThatCannotBeMadeLeavesTheQueueWhereItIs() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        PeerPaths paths = new PeerPaths(List.of("a", "b"));
        q.follow(paths);
        PathReport optimized = new PathReport(1, Map.of("v", PathState.OPTIMIZED, "w", PathState.OPTIMIZED));

        q.down.add(1);
        paths.report(1, optimized);
        q.runNextAttempt();
        assertEquals(1, log.count("WARNING pistore fake: cannot move to the optimized peer b (queue 3): peer 1 refused"),
                log.lines.toString());
        q.down.clear();

        q.listed.put(1, List.of(VOLUMES.get(0))); // b lacks w
        paths.report(1, new PathReport(2, optimized.states()));
        q.runNextAttempt();
        assertTrue(q.made.get(q.made.size() - 1).released, "b without w is not moved to");

        q.listed.put(1, List.of(new VolumeInfo("v", 64, BlockFormat.of(512, 8)), VOLUMES.get(1)));
        paths.report(1, new PathReport(3, optimized.states()));
        q.runNextAttempt();
        assertTrue(q.made.get(q.made.size() - 1).released, "b listing v in another format is not moved to");

        q.listed.remove(1);
        q.duringConnect = q::close;
        paths.report(1, new PathReport(4, optimized.states()));
        q.runNextAttempt();
        assertTrue(q.made.get(q.made.size() - 1).released, "closed while connecting: not moved");

        assertEquals(0, q.moves());
        assertSame(q.made.get(0), q.now());
        assertEquals("a", q.peer());
        assertTrue(q.attempts.isEmpty());
    }

    private static PathReport says(long counter, PathState s) {
        return new PathReport(counter, Map.of("v", s, "w", s));
    }

    @Test
    void anAnswerForOneVolumeForgetsThatVolumesMarksOnly() {
        Queue q = new Queue(new Lines(), List.of("a", "b"));
        Completion noV = Completion.failure(Status.NO_SUCH_VOLUME, "no volume v");
        Completion noW = Completion.failure(Status.NO_SUCH_VOLUME, "no volume w");
        Map<String, Completion> onA = new HashMap<>(Map.of("v", noV));
        q.answers.put(0, onA);
        q.answers.put(1, new HashMap<>(Map.of("w", noW)));
        q.started();
        assertEquals(Status.TRANSPORT_ERROR, submit(q, "v").status()); // a lacks v
        q.runNextAttempt();
        assertEquals(1, q.now().peer);
        assertEquals("b has no volume w; moving to another peer of a,b", submit(q, "w").message());
        q.runNextAttempt();
        assertEquals(0, q.now().peer, "back to a");
        onA.remove("v");
        assertEquals(Status.SUCCESS, submit(q, "v").status(), "v is on a after all: its mark goes, w's stays");
        assertEquals(Status.SUCCESS, submit(q, "w").status(), "w answers on a: b's mark for w goes as well");
        onA.put("w", noW);
        Completion c = submit(q, "w");
        assertEquals("a has no volume w; moving to another peer of a,b", c.message(),
                "only a is known to lack w now, so b is worth a try");
    }

    @Test
    void aReconnectPrefersTheOptimizedPeerToTheNextInTurn() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b", "c")).started();
        PeerPaths paths = new PeerPaths(List.of("a", "b", "c"));
        q.follow(paths);
        paths.report(1, says(1, PathState.OPTIMIZED));
        q.runNextAttempt(); // the move to b
        assertEquals(1, q.now().peer);
        q.now().lose("reset");
        paths.unreachable(1);
        paths.report(2, says(1, PathState.NON_OPTIMIZED)); // the next in turn, known
        paths.report(0, says(2, PathState.OPTIMIZED));
        assertEquals(1, q.attempts.size(), "no move while the connection is lost: the reconnect decides");
        q.runNextAttempt();
        assertEquals(0, q.now().peer, "a, the first of the list, is where v and w are served best");
        assertEquals(1, log.count("INFO pistore fake: failed over from b to a (queue 3) after 1 attempt"), log.lines.toString());
    }

    @Test
    void closingWhileAConnectionIsTakenUpReleasesItToo() {
        Queue q = new Queue(new Lines(), List.of("a", "b")).started();
        q.made.get(0).lose("reset");
        q.duringFence = q::close;
        q.runNextAttempt();
        assertTrue(q.closedNow());
        assertTrue(q.made.get(0).released);
        assertTrue(q.made.get(1).released, "the connection adopted as the queue closed is let go as well");
    }

    @Test
    void aLossNoticedWhileAMoveTakesUpItsConnectionStartsNoReconnect() {
        Lines log = new Lines();
        Queue q = new Queue(log, List.of("a", "b")).started();
        PeerPaths paths = new PeerPaths(List.of("a", "b"));
        q.follow(paths);
        paths.report(1, says(1, PathState.OPTIMIZED));
        Connection a = q.made.get(0);
        q.duringFence = () -> {
            q.duringFence = () -> { };
            a.lose("reset"); // the old connection goes just before the new one becomes current
        };
        q.runNextAttempt(); // the move
        assertEquals(1, q.now().peer);
        assertEquals(1, q.attempts.size(), "the loss was noticed while a was still current");
        q.runNextAttempt();
        assertEquals(2, q.made.size(), "the move took over: nothing more is connected");
        assertEquals(0, q.reconnects());
        assertTrue(q.reconnectingFrom.isEmpty());
        assertEquals(1, q.moves());
        assertEquals(Status.SUCCESS, submit(q, "v").status());
    }
}
