package io.pistore.frontend.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes one connection's replies without ever blocking: whatever the socket does not take is
 * queued, and the connection's thread writes the queue when the socket becomes writable, so no
 * engine thread ever waits for a slow client.
 *
 * <p>A reply completed on the connection's own thread (the transmission loop; with the in-process
 * {@code local} transport a request runs there while it is handed over) joins a batch that the
 * loop writes with one gathering write once the input holds no further complete request. A reply
 * completed on another thread is written by that thread, straight to the socket when nothing is
 * queued before it. A reply written in full goes back to the {@link ReplyPool}; a write error
 * closes the socket.
 */
final class ReplyWriter {
    private final NbdServer server;
    private final NbdSocket socket;
    private final String peer;

    /** Guards {@link #pending}, the socket's writes and {@link #pool}. */
    private final Object outLock = new Object();
    private final ReplyPool pool = new ReplyPool(outLock);
    /** Reply bytes the socket did not take yet; guarded by outLock. */
    private final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>();
    /** Bytes in {@link #pending} and in {@link #batch}. */
    private final AtomicLong pendingBytes = new AtomicLong();

    /** The thread of the transmission loop (replies it completes go to {@link #batch}). */
    private Thread loopThread;
    /** Replies completed on the loop's own thread, not written yet; only that thread. */
    private final ArrayList<ByteBuffer> batch = new ArrayList<>();
    private ByteBuffer[] gather = new ByteBuffer[16];

    ReplyWriter(NbdServer server, NbdSocket socket, String peer) {
        this.server = server;
        this.socket = socket;
        this.peer = peer;
    }

    /** The pool that read replies and write payloads come from and written replies go back to. */
    ReplyPool pool() {
        return pool;
    }

    /** Makes the calling thread the loop's: the replies it completes are batched from now on. */
    void loopOnThisThread() {
        loopThread = Thread.currentThread();
    }

    boolean onLoopThread() {
        return Thread.currentThread() == loopThread;
    }

    /** Reply bytes completed but not taken by the socket yet (batched, queued, or encrypted and unsent). */
    long pendingBytes() {
        return pendingBytes.get() + socket.unsentBytes();
    }

    /** Adds a reply to the batch {@link #flushBatch} writes; only the loop's thread. */
    void batch(ByteBuffer reply) {
        batch.add(reply);
        pendingBytes.addAndGet(reply.remaining());
    }

    /**
     * Writes the batch with as few gathering writes as the socket takes without blocking, behind
     * whatever is queued already; the rest joins the queue. Only the loop's thread.
     */
    /** Why a reply could not be written (the client went away), or null. */
    String failure() {
        return failure;
    }

    private volatile String failure;

    void flushBatch() {
        int n = batch.size();
        if (n == 0) {
            return;
        }
        if (gather.length < n) {
            gather = new ByteBuffer[Integer.highestOneBit(n) << 1];
        }
        batch.toArray(gather);
        batch.clear();
        synchronized (outLock) {
            if (socket.isClosed()) {
                Arrays.fill(gather, 0, n, null);
                return;
            }
            try {
                int first = 0;
                if (pending.isEmpty()) {
                    while (first < n) {
                        long w = socket.write(gather, first, Math.min(n - first, 1024));
                        pendingBytes.addAndGet(-w);
                        while (first < n && !gather[first].hasRemaining()) {
                            pool.recycleLocked(gather[first]);
                            first++;
                        }
                        if (w == 0) {
                            break;
                        }
                    }
                }
                for (int i = first; i < n; i++) {
                    pending.add(gather[i]);
                }
            } catch (IOException e) {
                server.log("nbd: " + peer + " reply failed: " + e.getMessage());
                failure = e.getMessage();
                socket.close();
            } finally {
                Arrays.fill(gather, 0, n, null);
            }
        }
    }

    /**
     * Writes a reply completed on another thread than the loop's: straight to the socket when
     * nothing is queued before it; what the socket does not take is queued, and the loop is woken
     * to write it once the socket is writable. Any thread.
     */
    void send(ByteBuffer reply) {
        boolean queued = false;
        synchronized (outLock) {
            if (socket.isClosed()) {
                return;
            }
            try {
                if (pending.isEmpty()) {
                    while (reply.hasRemaining() && socket.write(reply) > 0) {
                        // the socket takes what it can without blocking
                    }
                }
                if (!reply.hasRemaining()) {
                    pool.recycleLocked(reply);
                    // TLS: records the socket did not take; the loop sends them on OP_WRITE
                    queued = socket.unsentBytes() > 0;
                } else {
                    pending.add(reply);
                    pendingBytes.addAndGet(reply.remaining());
                    queued = true;
                }
            } catch (IOException e) {
                server.log("nbd: " + peer + " reply failed: " + e.getMessage());
                failure = e.getMessage();
                socket.close();
                return;
            }
        }
        if (queued) {
            socket.wakeup();
        }
    }

    /** Writes queued replies while the socket takes them; the connection's thread, on OP_WRITE. */
    void flushPending() throws IOException {
        synchronized (outLock) {
            if (!socket.flush()) {
                return;
            }
            while (!pending.isEmpty()) {
                ByteBuffer b = pending.peek();
                int n = socket.write(b);
                pendingBytes.addAndGet(-n);
                if (b.hasRemaining()) {
                    return;
                }
                pool.recycleLocked(pending.poll());
            }
        }
    }
}
