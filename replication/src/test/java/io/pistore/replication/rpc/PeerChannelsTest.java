package io.pistore.replication.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.BytesValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The calls of the peers' RPC against a peer played here (real sockets on loopback): replies matched
 * by id in whatever order they come, a peer's failure thrown as it was, no reply a timeout, a lost
 * connection failing what was in flight and the next call connecting again, a malformed frame
 * ending the connection instead of being read as a message.
 */
class PeerChannelsTest {
    private static final RaftPeerId PEER = RaftPeerId.valueOf("p");
    private final ServerSocketChannel listening;
    private final Map<FrameChannel, Boolean> accepted = new ConcurrentHashMap<>();
    private final PeerChannels calls = new PeerChannels(() -> "test");
    /** What the played peer does with each request: the request and its connection. */
    private volatile BiConsumer<RpcFrame, FrameChannel> peer = (f, c) -> { };

    PeerChannelsTest() throws IOException {
        listening = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        Thread t = new Thread(() -> {
            while (listening.isOpen()) {
                try {
                    SocketChannel c = listening.accept();
                    FrameChannel[] self = new FrameChannel[1];
                    self[0] = new FrameChannel(c, "client", "played-peer", f -> peer.accept(f, self[0]), e -> { });
                    accepted.put(self[0], true);
                    self[0].start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
        calls.addPeers(List.of(RaftPeer.newBuilder().setId(PEER)
                .setAddress("127.0.0.1:" + ((InetSocketAddress) listening.getLocalAddress()).getPort()).build()));
    }

    @AfterEach
    void close() throws IOException {
        calls.close();
        listening.close();
        accepted.keySet().forEach(FrameChannel::close);
    }

    private static void reply(FrameChannel c, long id, byte kind, ByteString body) {
        try {
            c.write(RpcFrame.encode(id, kind, BytesValue.of(body)), System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private CompletableFuture<RpcFrame> call(String body, long timeoutMs) {
        return calls.call(PEER, RpcFrame.APPEND, BytesValue.of(ByteString.copyFromUtf8(body)), timeoutMs);
    }

    private static String text(RpcFrame f) throws IOException {
        return f.body(BytesValue.parser()).getValue().toStringUtf8();
    }

    @Test
    void repliesThatComeInAnotherOrderStillAnswerTheirOwnCalls() throws Exception {
        Map<String, RpcFrame> held = new ConcurrentHashMap<>();
        peer = (f, c) -> {
            try {
                String s = text(f);
                held.put(s, f);
                if (s.equals("second")) { // answer the second first, then the first
                    reply(c, f.id(), RpcFrame.DONE, ByteString.copyFromUtf8("to second"));
                    reply(c, held.get("first").id(), RpcFrame.DONE, ByteString.copyFromUtf8("to first"));
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        };
        CompletableFuture<RpcFrame> first = call("first", 10_000);
        Eventually.await("the played peer to hold the first request", () -> held.containsKey("first"));
        CompletableFuture<RpcFrame> second = call("second", 10_000);
        assertEquals("to first", text(first.get(10, TimeUnit.SECONDS)));
        assertEquals("to second", text(second.get(10, TimeUnit.SECONDS)));
    }

    @Test
    void aPeersFailureIsThrownAsThePeerThrewIt() {
        peer = (f, c) -> {
            try {
                c.write(RpcFrame.failure(f.id(), new NotLeaderException(RaftGroupMemberId.valueOf(PEER, RaftGroupId.randomId()),
                        null, List.of())), System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        };
        ExecutionException e = assertThrows(ExecutionException.class, () -> call("x", 10_000).get(10, TimeUnit.SECONDS));
        assertInstanceOf(NotLeaderException.class, e.getCause());
    }

    @Test
    void aCallWithNoReplyTimesOutAndTheConnectionStillServesTheNext() throws Exception {
        peer = (f, c) -> {
            try {
                if (text(f).equals("answer me")) {
                    reply(c, f.id(), RpcFrame.DONE, ByteString.copyFromUtf8("answered"));
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        };
        ExecutionException e = assertThrows(ExecutionException.class, () -> call("ignore me", 200).get(10, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutIOException.class, e.getCause());
        assertEquals("answered", text(call("answer me", 10_000).get(10, TimeUnit.SECONDS)));
        assertEquals(1, accepted.size(), "the same connection");
    }

    @Test
    void aLostConnectionFailsTheCallsOnItAndTheNextCallConnectsAgain() throws Exception {
        peer = (f, c) -> {
            try {
                if (text(f).equals("drop")) {
                    c.close();
                } else {
                    reply(c, f.id(), RpcFrame.DONE, ByteString.copyFromUtf8("again"));
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        };
        ExecutionException e = assertThrows(ExecutionException.class, () -> call("drop", 10_000).get(10, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, e.getCause());
        RpcFrame again = null;
        for (int i = 0; i < 100 && again == null; i++) { // the close may reach this end after the next call left
            try {
                again = call("hello", 10_000).get(10, TimeUnit.SECONDS);
            } catch (ExecutionException x) {
                assertInstanceOf(IOException.class, x.getCause());
            }
        }
        assertEquals("again", text(again));
        assertTrue(accepted.size() >= 2, "a second connection");
    }

    @Test
    void aMalformedFrameEndsTheConnectionAndFailsTheCall() throws Exception {
        peer = (f, c) -> {
            try {
                c.write(ByteBuffer.allocate(4).putInt(0, 3), System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        };
        ExecutionException e = assertThrows(ExecutionException.class, () -> call("x", 10_000).get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("malformed frame"), e.getCause().toString());
    }

    @Test
    void aPeerWithNoKnownAddressIsAClearFailure() {
        ExecutionException e = assertThrows(ExecutionException.class, () -> calls.call(RaftPeerId.valueOf("nobody"),
                RpcFrame.APPEND, BytesValue.of(ByteString.EMPTY), 1000).get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("no address known for peer nobody"), e.getCause().toString());
    }
}
