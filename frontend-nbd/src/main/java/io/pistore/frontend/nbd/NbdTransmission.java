package io.pistore.frontend.nbd;

import static io.pistore.frontend.nbd.NbdProtocol.*;

import io.pistore.spi.net.PolitePoll;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

/**
 * The transmission phase of one connection, on the connection's thread: parse every complete
 * request in the input buffer and hand it to the {@link NbdDispatcher}, write the replies this
 * thread completed meanwhile in one go ({@link ReplyWriter#flushBatch}), and wait for more input
 * (polling first when the client waits for each reply), for the socket to take queued replies, or
 * for completions.
 *
 * <p>Bounds: requests in flight, and payload bytes in flight or waiting to be sent, are limited per
 * connection (reading pauses at the limit); a write's payload buffer is allocated only after its
 * length was checked against the largest payload; writes longer than 32 MiB and bad request magic
 * numbers end the connection (only this one).
 */
final class NbdTransmission {
    private static final int IN_BUFFER = 256 * 1024;
    /** A write payload at least this large is read straight into its own buffer. */
    private static final int DIRECT_READ = 64 * 1024;

    private final NbdServer server;
    private final NbdSocket socket;
    private final ReplyWriter writer;
    private final NbdDispatcher dispatcher;
    /** How the loop waits for input (see {@link NbdConnection#waiting}). */
    private final PolitePoll poll;
    private ByteBuffer pollIn;
    private ByteBuffer pollPayload;
    private final PolitePoll.Probe readProbe = () -> readInput(pollIn, pollPayload);
    /**
     * {@link System#nanoTime} after the last socket read that returned bytes: every request parsed
     * from the input buffer had arrived by then (a replicated volume's reads received together share
     * one read index).
     */
    private long lastReceiveNanos;

    NbdTransmission(NbdServer server, NbdSocket socket, ReplyWriter writer, NbdDispatcher dispatcher,
                    PolitePoll poll) {
        this.server = server;
        this.socket = socket;
        this.writer = writer;
        this.dispatcher = dispatcher;
        this.poll = poll;
    }

    /** Runs the transmission phase until it ends; returns why it ended. */
    String run() throws IOException {
        writer.loopOnThisThread();
        ByteBuffer in = ByteBuffer.allocateDirect(IN_BUFFER);
        in.flip();
        NbdRequest cur = null;
        ByteBuffer payload = null;
        long discard = 0;
        boolean disc = false;
        boolean pipelining = false;
        boolean arrivedAtOnce = false;
        while (!socket.isClosed()) {
            // 1. Everything complete in the input buffer, as far as the limits allow.
            int parsed = 0;
            while (true) {
                if (cur != null) {
                    if (payload != null) {
                        move(in, payload);
                        if (payload.hasRemaining()) {
                            break;
                        }
                        payload.flip();
                        dispatcher.write(cur, payload);
                        cur = null;
                        payload = null;
                        continue;
                    }
                    int skip = (int) Math.min(in.remaining(), discard);
                    in.position(in.position() + skip);
                    discard -= skip;
                    if (discard > 0) {
                        break;
                    }
                    dispatcher.refuseWrite(cur);
                    cur = null;
                    continue;
                }
                if (disc || !admit() || in.remaining() < REQUEST_HEADER) {
                    break;
                }
                NbdRequest r = NbdRequest.parse(in, lastReceiveNanos);
                parsed++;
                if (r.type == CMD_DISC) {
                    disc = true;
                    break;
                }
                dispatcher.begin(r);
                if (r.type == CMD_WRITE) {
                    if (r.length > PORTABLE_PAYLOAD_LIMIT) {
                        throw new NbdProtocolException("write of " + r.length + " bytes (limit " + PORTABLE_PAYLOAD_LIMIT
                                + ")");
                    }
                    cur = r;
                    payload = dispatcher.payloadBuffer(r);
                    if (payload == null) {
                        discard = r.length;
                    }
                    continue;
                }
                dispatcher.dispatch(r);
            }
            // The replies this thread completed, in one gathering write.
            writer.flushBatch();
            if (disc && dispatcher.inFlight() == 0 && writer.pendingBytes() == 0) {
                return "disconnect requested (NBD_CMD_DISC)";
            }
            // 2. A client that pipelines usually has more input ready: read it without asking the
            //    selector. With one request in flight (queue depth 1) the read would find nothing,
            //    unless the client sent its next request before it could have seen our reply: that
            //    read, done when this connection polls, tells a pipelining client from one that
            //    waits for each reply even when polling catches the requests one by one.
            if (parsed > 0) {
                pipelining = parsed > 1 || arrivedAtOnce;
                arrivedAtOnce = false;
            }
            boolean reading = !disc && (cur != null || admit());
            long spin = server.options().spinNanos;
            if (reading && writer.pendingBytes() == 0
                    && (cur != null || pipelining || dispatcher.inFlight() > 1
                        || (spin > 0 && dispatcher.inFlight() == 0))) {
                int n = readInput(in, payload);
                if (n < 0) {
                    return endOfInput(cur);
                }
                if (n > 0) {
                    arrivedAtOnce |= cur == null;
                    continue;
                }
            }
            // 3. Wait for input, for the socket to take queued replies, or for completions. When a
            //    client that does not pipeline has every reply (or is sending a payload), its next
            //    bytes usually follow within microseconds: poll for them (adaptively, politely)
            //    before blocking. A pipelining client is not polled for: its requests come in
            //    bursts, and a wait that blocks lets a burst gather, whose replies then leave in one
            //    write (polling would catch and answer them one at a time), and on a small machine
            //    the CPU is better left to the client.
            if (reading && !pipelining && writer.pendingBytes() == 0
                    && dispatcher.inFlight() == (cur != null ? 1 : 0)) {
                pollIn = in;
                pollPayload = payload;
                int n = poll.poll(readProbe, spin);
                pollPayload = null;
                if (n < 0) {
                    return endOfInput(cur);
                }
                if (n > 0) {
                    continue;
                }
            }
            dispatcher.wakeLoopOnCompletion(!reading);
            if (!reading && (disc ? dispatcher.inFlight() == 0 : admit())) {
                continue; // a completion came between the checks and the flag
            }
            int ops = reading ? SelectionKey.OP_READ : 0;
            if (writer.pendingBytes() > 0) {
                ops |= SelectionKey.OP_WRITE;
            }
            poll.blocking();
            int ready = socket.await(ops);
            dispatcher.wakeLoopOnCompletion(false);
            if ((ready & SelectionKey.OP_READ) != 0) {
                poll.wokeUp();
            }
            if ((ready & SelectionKey.OP_WRITE) != 0) {
                writer.flushPending();
            }
            if ((ready & SelectionKey.OP_READ) != 0 && readInput(in, payload) < 0) {
                return endOfInput(cur);
            }
        }
        return "server stopping";
    }

    /** One non-blocking read: into the write payload being filled when it is large, else the buffer. */
    private int readInput(ByteBuffer in, ByteBuffer payload) throws IOException {
        if (payload != null && !in.hasRemaining() && payload.remaining() >= DIRECT_READ) {
            return received(socket.read(payload));
        }
        in.compact();
        try {
            return received(socket.read(in));
        } finally {
            in.flip();
        }
    }

    private int received(int n) {
        if (n > 0) {
            lastReceiveNanos = System.nanoTime();
        }
        return n;
    }

    private String endOfInput(NbdRequest cur) {
        return dispatcher.inFlight() > 0 || cur != null ? "closed by the client with requests in flight"
                : "closed by the client without NBD_CMD_DISC";
    }

    private static void move(ByteBuffer from, ByteBuffer to) {
        int n = Math.min(from.remaining(), to.remaining());
        ByteBuffer part = from.duplicate();
        part.limit(part.position() + n);
        to.put(part);
        from.position(from.position() + n);
    }

    /** Whether the limits let the loop read and start another request. */
    private boolean admit() {
        NbdServer.Options o = server.options();
        return dispatcher.inFlight() < o.maxInFlight
                && dispatcher.inFlightBytes() + writer.pendingBytes() < o.maxInFlightBytes;
    }
}
