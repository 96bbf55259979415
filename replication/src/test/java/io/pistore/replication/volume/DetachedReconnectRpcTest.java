package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.junit.jupiter.api.Test;

/** A reconnect that blocks (a channel to a frozen peer) no longer holds the caller: it runs on another thread. */
class DetachedReconnectRpcTest {
    /** An RPC whose reconnect blocks until released, as gRPC's channel shutdown does with calls hanging. */
    private static final class BlockingReconnects implements RaftClientRpc {
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch reconnected = new CountDownLatch(1);
        final List<String> calls = new ArrayList<>();

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void addRaftPeers(Collection<RaftPeer> peers) {
        }

        @Override
        public boolean shouldReconnect(Throwable t) {
            return t instanceof ConnectException;
        }

        @Override
        public boolean handleException(RaftPeerId server, Throwable t, boolean reconnect) {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (calls) {
                calls.add(server + " " + t.getClass().getSimpleName() + " " + reconnect + " on "
                        + Thread.currentThread().getName());
            }
            reconnected.countDown();
            return true;
        }

        /** Once {@code pool} ran everything handed to it: exactly one call was made, starting with {@code start}. */
        void assertOneCall(ExecutorService pool, String start) throws InterruptedException {
            pool.shutdown();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
            synchronized (calls) {
                assertEquals(1, calls.size(), calls.toString());
                assertTrue(calls.get(0).startsWith(start), calls.toString());
            }
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aBlockingReconnectRunsOnAnotherThreadAndTheCallerReturnsAtOnce() throws Exception {
        BlockingReconnects slow = new BlockingReconnects();
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "reconnect-test"));
        try {
            DetachedReconnectRpc rpc = new DetachedReconnectRpc(slow, pool);
            // returns while the reconnect is still held: on the caller's thread it would block forever
            assertTrue(rpc.handleException(RaftPeerId.valueOf("n2"), new TimeoutIOException("frozen"), true));
            assertEquals(1, slow.release.getCount(), "the reconnect is still held");
            slow.release.countDown();
            assertTrue(slow.reconnected.await(10, TimeUnit.SECONDS), "the reconnect ran");
            synchronized (slow.calls) {
                assertEquals(List.of("n2 TimeoutIOException true on reconnect-test"), slow.calls);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anErrorThatNeedsNoReconnectIsNotHandedOn() throws Exception {
        BlockingReconnects slow = new BlockingReconnects();
        slow.release.countDown();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            DetachedReconnectRpc rpc = new DetachedReconnectRpc(slow, pool);
            assertFalse(rpc.handleException(RaftPeerId.valueOf("n3"), new IOException("refused"), false));
            // one the inner RPC says needs a reconnect, without the caller asking, is handed on
            assertTrue(rpc.handleException(RaftPeerId.valueOf("n3"), new ConnectException("gone"), false));
            assertTrue(slow.reconnected.await(10, TimeUnit.SECONDS));
            slow.assertOneCall(pool, "n3 ConnectException false");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theClientItBuildsUsesIt() throws Exception {
        RaftGroup g = RaftGroup.valueOf(org.apache.ratis.protocol.RaftGroupId.randomId(),
                RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:1").build());
        try (RaftClient c = DetachedReconnectRpc.newClient(new RaftProperties()).setRaftGroup(g).build()) {
            assertSame(DetachedReconnectRpc.class, c.getClientRpc().getClass());
        }
    }

    /**
     * A peer that learns of a new leader drops its client's connection to the leader the client still
     * takes (the requests waiting there go again at once); nothing when the client already takes the
     * new one or none is known.
     */
    @Test
    void aNewLeaderDropsTheConnectionToTheOldOneOnly() throws Exception {
        BlockingReconnects inner = new BlockingReconnects();
        inner.release.countDown();
        RaftGroup g = RaftGroup.valueOf(org.apache.ratis.protocol.RaftGroupId.randomId(),
                RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:1").build(),
                RaftPeer.newBuilder().setId("n2").setAddress("127.0.0.1:2").build());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RaftClient c = RaftClient.newBuilder().setProperties(new RaftProperties()).setRaftGroup(g)
                .setLeaderId(RaftPeerId.valueOf("n1")).setClientRpc(new DetachedReconnectRpc(inner, pool)).build()) {
            DetachedReconnectRpc.leaderChanged(c, RaftPeerId.valueOf("n1"));
            DetachedReconnectRpc.leaderChanged(c, null);
            DetachedReconnectRpc.leaderChanged(c, RaftPeerId.valueOf("n2"));
            assertTrue(inner.reconnected.await(10, TimeUnit.SECONDS), "the connection to n1 dropped");
            inner.assertOneCall(pool, "n1 IOException true");
        } finally {
            pool.shutdownNow();
        }
    }
}
