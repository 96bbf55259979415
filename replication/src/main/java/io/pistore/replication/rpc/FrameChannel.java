package io.pistore.replication.rpc;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;

/**
 * One connection of the peers' RPC, either end: frames written by any thread, one at a time, each
 * within a deadline; frames read by one thread of its own. The socket is non-blocking so that no
 * writer waits past its deadline on a peer that stopped reading (frozen, cut off): the writer that
 * runs out of time closes the connection, which fails what was in flight on it, and the next call
 * opens another. Ratis's threads write here (a follower's log worker its replies, a leader's
 * appender its appends), so a write never waits longer than one RPC; it waits at all only when the
 * socket's buffer is full, that is when the other end stopped reading.
 */
final class FrameChannel implements Closeable {
    private final SocketChannel channel;
    private final String peer;
    private final ReentrantLock writing = new ReentrantLock();
    private final Selector writable;
    private final Selector readable;
    private final Thread reader;
    private volatile boolean closed;
    /** Where {@link #write(long, byte, MessageLite, long)} puts a frame together; under {@link #writing}. */
    private ByteBuffer encoding;
    /** The largest encoding buffer a channel keeps: larger frames (a snapshot's chunks) get one of their own. */
    private static final int KEPT_ENCODING = 8 << 20;

    /**
     * Takes {@code channel} (connected) with its reader thread, named {@code name}, which once {@link
     * #start started} hands each frame to {@code frames} and, once the connection ends, the reason to {@code ended}.
     */
    FrameChannel(SocketChannel channel, String peer, String name, Consumer<RpcFrame> frames, Consumer<IOException> ended)
            throws IOException {
        this.channel = channel;
        this.peer = peer;
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        this.writable = Selector.open();
        channel.register(writable, 0);
        this.readable = Selector.open();
        channel.register(readable, SelectionKey.OP_READ);
        this.reader = new Thread(() -> readAll(frames, ended), name);
        reader.setDaemon(true);
    }

    /** Starts reading, once whoever handles the frames can answer on this channel. */
    FrameChannel start() {
        reader.start();
        return this;
    }

    /** Writes one frame by {@code deadlineNanos} ({@link System#nanoTime}), or closes the connection and fails. */
    void write(ByteBuffer frame, long deadlineNanos) throws IOException {
        lock(deadlineNanos);
        try {
            writeLocked(frame, deadlineNanos);
        } finally {
            writing.unlock();
        }
    }

    /**
     * Writes {@code body} as the frame of request {@code id} of {@code kind} by {@code deadlineNanos},
     * or closes the connection and fails. The frame is put together in this channel's own direct
     * buffer (the writers take turns): the socket takes its bytes from there as they are, where a
     * frame in a heap array would be copied once more into a temporary direct buffer on every write.
     */
    void write(long id, byte kind, MessageLite body, long deadlineNanos) throws IOException {
        lock(deadlineNanos);
        try {
            int size = RpcFrame.frameSize(body);
            ByteBuffer b = encoding;
            if (b == null || b.capacity() < size) {
                b = ByteBuffer.allocateDirect(Math.max(size, Math.min(2 * (b == null ? 0 : b.capacity()), KEPT_ENCODING)));
                encoding = b.capacity() <= KEPT_ENCODING ? b : null; // a rare larger frame leaves no large buffer behind
            }
            b.clear().limit(size);
            RpcFrame.encode(id, kind, body, b);
            writeLocked(b, deadlineNanos);
        } finally {
            writing.unlock();
        }
    }

    private void lock(long deadlineNanos) throws IOException {
        try {
            if (!writing.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw timedOut("waiting to write");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted writing to " + peer);
        }
    }

    /** Writes all of {@code frame}; the caller holds {@link #writing}. */
    private void writeLocked(ByteBuffer frame, long deadlineNanos) throws IOException {
        try {
            while (frame.hasRemaining()) {
                if (closed) {
                    throw new IOException("connection to " + peer + " closed");
                }
                if (channel.write(frame) == 0) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        throw timedOut("writing");
                    }
                    SelectionKey k = channel.keyFor(writable);
                    k.interestOps(SelectionKey.OP_WRITE);
                    writable.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                    writable.selectedKeys().clear();
                    k.interestOps(0);
                }
            }
        } catch (IOException e) {
            close();
            throw e;
        } catch (java.nio.channels.ClosedSelectorException | java.nio.channels.CancelledKeyException e) {
            throw new IOException("connection to " + peer + " closed");
        }
    }

    private IOException timedOut(String what) {
        close();
        return new TimeoutIOException("connection to " + peer + " closed: timed out " + what + " (the peer reads nothing)");
    }

    private void readAll(Consumer<RpcFrame> frames, Consumer<IOException> ended) {
        IOException why = null;
        ByteBuffer length = ByteBuffer.allocate(4);
        try {
            while (!closed) {
                length.clear();
                fill(length);
                int n = length.getInt(0);
                if (n < RpcFrame.HEADER || n > RpcFrame.MAX_BYTES) {
                    throw new IOException("malformed frame from " + peer + ": length " + n);
                }
                ByteBuffer body = ByteBuffer.allocate(n);
                fill(body);
                frames.accept(new RpcFrame(body.getLong(0), body.get(8), body.array()));
            }
        } catch (IOException e) {
            why = e;
        } catch (RuntimeException e) {
            why = new IOException("connection to " + peer + " failed: " + e, e);
        } finally {
            boolean closedHere = closed;
            close();
            try {
                readable.close();
            } catch (IOException e) {
                // closing: nothing to keep
            }
            ended.accept(why != null && !closedHere ? why : new IOException("connection to " + peer + " closed"));
        }
    }

    /** Reads until {@code b} is full; end of stream or a closed channel fail. */
    private void fill(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            int r = channel.read(b);
            if (r < 0) {
                throw new IOException("connection to " + peer + " closed by the peer");
            }
            if (r == 0) {
                readable.select();
                readable.selectedKeys().clear();
                if (closed) {
                    throw new IOException("connection to " + peer + " closed");
                }
            }
        }
    }

    boolean isOpen() {
        return !closed;
    }

    /** Closes the connection; the reader thread ends and reports it. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing to keep
        }
        try {
            writable.close();
        } catch (IOException e) {
            // as above
        }
        readable.wakeup(); // the reader sees the close and ends
    }
}
