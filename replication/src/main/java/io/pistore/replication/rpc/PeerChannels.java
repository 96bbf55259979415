package io.pistore.replication.rpc;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.util.NetUtils;

/**
 * The calls one end makes to the peers it knows: one connection per peer, opened on first use and
 * again after it failed, each call a frame whose reply (matched by id, in any order) completes its
 * future. A call that gets no reply within its time fails with a {@link TimeoutIOException} and
 * leaves the connection as it is (a slow peer's later replies are dropped); a connection that fails
 * fails every call in flight on it. Thread-safe.
 */
final class PeerChannels implements Closeable {
    private final java.util.function.Supplier<String> owner;
    private final Map<RaftPeerId, InetSocketAddress> addresses = new ConcurrentHashMap<>();
    private final Map<RaftPeerId, Connection> connections = new ConcurrentHashMap<>();
    private final Map<RaftPeerId, Object> connecting = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private volatile boolean closed;

    /** One connection and the calls in flight on it. */
    private final class Connection {
        final Map<Long, CompletableFuture<RpcFrame>> calls = new ConcurrentHashMap<>();
        final FrameChannel channel;

        Connection(RaftPeerId id, InetSocketAddress to, int timeoutMs) throws IOException {
            SocketChannel c = SocketChannel.open();
            try {
                c.socket().connect(to, Math.max(1, timeoutMs));
                channel = new FrameChannel(c, id + " (" + to + ")", owner.get() + "->" + id + "-rpc", this::replied, this::ended)
                        .start();
            } catch (IOException | RuntimeException e) {
                c.close();
                throw e;
            }
        }

        private void replied(RpcFrame f) {
            CompletableFuture<RpcFrame> call = calls.remove(f.id());
            if (call != null) {
                call.complete(f);
            }
        }

        private void ended(IOException why) {
            calls.values().forEach(c -> c.completeExceptionally(why));
            calls.clear();
        }
    }

    /** The calls of {@code owner} (named in its threads; asked when a connection opens). */
    PeerChannels(java.util.function.Supplier<String> owner) {
        this.owner = owner;
    }

    void addPeers(Collection<RaftPeer> peers) {
        for (RaftPeer p : peers) {
            if (p.getAddress() != null) {
                addresses.put(p.getId(), NetUtils.createSocketAddr(p.getAddress()));
            }
        }
    }

    /**
     * Sends {@code body} as a request of {@code kind} to peer {@code to}; completes with the reply's
     * frame, exceptionally with the peer's failure (as it threw it), the connection's, or a timeout
     * after {@code timeoutMs}.
     */
    CompletableFuture<RpcFrame> call(RaftPeerId to, byte kind, MessageLite body, long timeoutMs) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long id = ids.incrementAndGet();
        CompletableFuture<RpcFrame> reply = new CompletableFuture<>();
        Connection c;
        try {
            c = connection(to, timeoutMs);
            c.calls.put(id, reply);
            if (!c.channel.isOpen()) {
                throw new IOException("connection to " + to + " closed");
            }
            c.channel.write(id, kind, body, deadline);
        } catch (IOException e) {
            reply.completeExceptionally(e);
            return reply;
        }
        Connection sent = c;
        return CoarseTimeouts.shared().within(reply, Math.max(1, timeoutMs)).handle((f, t) -> {
            sent.calls.remove(id);
            if (t instanceof TimeoutException) {
                throw new java.util.concurrent.CompletionException(new TimeoutIOException(
                        owner.get() + "->" + to + ": no reply within " + timeoutMs + " ms", (TimeoutException) t));
            }
            if (t != null) {
                throw t instanceof java.util.concurrent.CompletionException ce ? ce : new java.util.concurrent.CompletionException(t);
            }
            if (f.kind() == RpcFrame.FAILED) {
                throw new java.util.concurrent.CompletionException(f.thrown());
            }
            return f;
        });
    }

    private Connection connection(RaftPeerId to, long timeoutMs) throws IOException {
        if (closed) {
            throw new IOException(owner.get() + ": closed");
        }
        Connection c = connections.get(to);
        if (c != null && c.channel.isOpen()) {
            return c;
        }
        synchronized (connecting.computeIfAbsent(to, k -> new Object())) { // one peer's connect holds up no other's calls
            c = connections.get(to);
            if (c != null && c.channel.isOpen()) {
                return c;
            }
            InetSocketAddress a = addresses.get(to);
            if (a == null) {
                throw new IOException(owner.get() + ": no address known for peer " + to);
            }
            c = new Connection(to, a, (int) Math.min(Integer.MAX_VALUE, timeoutMs));
            connections.put(to, c);
            return c;
        }
    }

    /** Drops the connection to {@code peer}: the next call opens another. */
    void reset(RaftPeerId peer) {
        Connection c = connections.remove(peer);
        if (c != null) {
            c.channel.close();
        }
    }

    @Override
    public void close() {
        closed = true;
        connections.keySet().forEach(this::reset);
    }
}
