package io.pistore.frontend.nbd;

import static io.pistore.frontend.nbd.NbdProtocol.*;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Turns the transmission phase's requests into calls on the export and their outcomes into
 * replies: checks each request's flags and range, hands it to {@link NbdExport} (where PI is
 * inserted on the way in and checked and stripped on the way out), and replies on whichever thread
 * the export completes it, simple or structured as negotiated; a failed PI check reaches the client
 * as EIO at the first failing byte (structured replies). Counts what is in flight, from a request's
 * header until its reply is handed to the {@link ReplyWriter}, for the loop's limits.
 */
final class NbdDispatcher {
    private final NbdServer server;
    private final String peer;
    private final NbdExport export;
    private final boolean structured;
    /** Whether base:allocation is selected (NBD_CMD_BLOCK_STATUS allowed). */
    private final boolean allocationContext;
    /** The access file grants this client reads only: writes, trims and zeroes get EPERM. */
    private final boolean readOnly;
    private final NbdSocket socket;
    private final ReplyWriter writer;
    private final ReplyPool pool;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong inFlightBytes = new AtomicLong();
    /** Set by the loop when it waits for completions (paused reading or draining after DISC). */
    private volatile boolean wakeLoop;

    NbdDispatcher(NbdServer server, String peer, NbdHandshake.Negotiated negotiated, NbdSocket socket,
                  ReplyWriter writer) {
        this.server = server;
        this.peer = peer;
        this.export = negotiated.export();
        this.structured = negotiated.structured();
        this.allocationContext = negotiated.allocationContext();
        this.readOnly = negotiated.readOnly();
        this.socket = socket;
        this.writer = writer;
        this.pool = writer.pool();
    }

    /** Requests from their header until their reply was handed to the writer. */
    int inFlight() {
        return inFlight.get();
    }

    /** Payload bytes of the requests in flight (write payloads read or being read, read replies). */
    long inFlightBytes() {
        return inFlightBytes.get();
    }

    /** Whether a completion on another thread wakes the loop (it waits for one rather than for input). */
    void wakeLoopOnCompletion(boolean wake) {
        wakeLoop = wake;
    }

    /** Counts a request from its header until its reply is handed to the socket. */
    void begin(NbdRequest r) {
        inFlight.incrementAndGet();
    }

    /**
     * The buffer a write's payload is read into, its bytes counted in flight; null when the payload
     * exceeds the export's largest, which the loop then skips and {@link #refuseWrite} answers.
     */
    ByteBuffer payloadBuffer(NbdRequest r) {
        if (r.length > export.maxPayload) {
            return null;
        }
        // A pooled direct buffer, as for read replies: no zeroing of a fresh heap buffer per
        // write, no copy through the JDK's temporary direct buffer, and back to the pool once the
        // engine is done with it.
        ByteBuffer payload = pool.take(0, (int) r.length);
        inFlightBytes.addAndGet(r.length);
        return payload;
    }

    /** Answers a write whose payload exceeded the largest (its bytes were skipped). */
    void refuseWrite(NbdRequest r) {
        fail(r, EINVAL, -1, "write of " + r.length + " bytes exceeds the largest payload of "
                + export.maxPayload + " bytes");
    }

    /** Hands a request other than a write (or a disconnect) to the export, or fails it. */
    void dispatch(NbdRequest r) {
        switch (r.type) {
            case CMD_READ:
                read(r);
                break;
            case CMD_BLOCK_STATUS:
                blockStatus(r);
                break;
            case CMD_FLUSH:
                if (!flagsAllowed(r, CMD_FLAG_FUA)) {
                    return;
                }
                engine(r, export.flush(), 0);
                break;
            case CMD_TRIM:
                if (refusedReadOnly(r, 0) || !flagsAllowed(r, CMD_FLAG_FUA) || !inRange(r, EINVAL)) {
                    return;
                }
                engine(r, r.length == 0 ? done() : export.trim(r.offset, r.length), 0);
                break;
            case CMD_WRITE_ZEROES:
                if (refusedReadOnly(r, 0) || !flagsAllowed(r, CMD_FLAG_FUA | CMD_FLAG_NO_HOLE) || !inRange(r, ENOSPC)) {
                    return;
                }
                engine(r, r.length == 0 ? done() : export.writeZeroes(r.offset, r.length,
                        (r.flags & CMD_FLAG_FUA) != 0, (r.flags & CMD_FLAG_NO_HOLE) != 0), 0);
                break;
            default:
                fail(r, EINVAL, -1, "unknown command " + r.type);
                break;
        }
    }

    private void read(NbdRequest r) {
        if (!flagsAllowed(r, CMD_FLAG_FUA | (structured ? CMD_FLAG_DF : 0)) || !inRange(r, EINVAL)) {
            return;
        }
        if (r.length > export.maxPayload) {
            fail(r, EINVAL, -1, "read of " + r.length + " bytes exceeds the largest payload of "
                    + export.maxPayload + " bytes");
            return;
        }
        int len = (int) r.length;
        if (len == 0) {
            engine(r, done(), 0);
            return;
        }
        int header = NbdReplies.readHeaderLength(structured);
        ByteBuffer reply = pool.take(header, len);
        inFlightBytes.addAndGet(len);
        ByteBuffer data = reply.duplicate();
        data.position(header);
        server.engineRequests.incrementAndGet();
        export.read(r.offset, data.slice(), r.receivedNanos).whenComplete((o, ex) -> {
            server.engineRequests.decrementAndGet();
            Outcome out = ex != null ? Outcome.error(EIO, String.valueOf(ex)) : o;
            if (out.isOk()) {
                NbdReplies.putReadHeader(reply, structured, r.cookie, r.offset, len);
                complete(r, reply, len);
            } else {
                pool.recycle(reply);
                failed(r, out, len);
            }
        });
    }

    /** NBD_CMD_BLOCK_STATUS for base:allocation: one NBD_REPLY_TYPE_BLOCK_STATUS chunk. */
    private void blockStatus(NbdRequest r) {
        if (!allocationContext) {
            fail(r, EINVAL, -1, "NBD_CMD_BLOCK_STATUS without the base:allocation meta context (NBD_OPT_SET_META_CONTEXT)");
            return;
        }
        if (!flagsAllowed(r, CMD_FLAG_REQ_ONE) || !inRange(r, EINVAL)) {
            return;
        }
        if (r.length == 0) {
            fail(r, EINVAL, -1, "NBD_CMD_BLOCK_STATUS of length 0");
            return;
        }
        server.engineRequests.incrementAndGet();
        // the blocks are read into a pooled buffer, back in the pool once the answer is known
        ByteBuffer scratch = export.statusReads() ? pool.take(0, export.statusBlocks(r.offset, r.length) * export.dataSize)
                : null;
        export.blockStatus(r.offset, r.length, (r.flags & CMD_FLAG_REQ_ONE) != 0, scratch).whenComplete((x, ex) -> {
            if (scratch != null) {
                pool.recycle(scratch);
            }
            server.engineRequests.decrementAndGet();
            Outcome out = ex != null ? Outcome.error(EIO, String.valueOf(ex)) : x.outcome;
            if (!out.isOk()) {
                failed(r, out, 0);
                return;
            }
            complete(r, NbdReplies.blockStatus(r.cookie, x), 0);
        });
    }

    /** Hands a write whose payload was read in full to the export; the payload goes back to the pool after. */
    void write(NbdRequest r, ByteBuffer payload) {
        long bytes = r.length;
        if (refusedReadOnly(r, bytes)) {
            pool.recycle(payload);
            return;
        }
        if (!flagsAllowed(r, CMD_FLAG_FUA, bytes) || !inRange(r, ENOSPC, bytes)) {
            return;
        }
        engine(r, r.length == 0 ? done() : export.write(r.offset, payload, (r.flags & CMD_FLAG_FUA) != 0), bytes,
                payload);
    }

    private static CompletableFuture<Outcome> done() {
        return CompletableFuture.completedFuture(Outcome.OK);
    }

    /** Replies when the engine's part of a request (other than a read) is done. */
    private void engine(NbdRequest r, CompletableFuture<Outcome> f, long bytes) {
        engine(r, f, bytes, null);
    }

    /** The same, and {@code payload} (a write's) goes back to the pool when the engine is done with it. */
    private void engine(NbdRequest r, CompletableFuture<Outcome> f, long bytes, ByteBuffer payload) {
        server.engineRequests.incrementAndGet();
        f.whenComplete((o, ex) -> {
            server.engineRequests.decrementAndGet();
            if (payload != null) {
                pool.recycle(payload);
            }
            Outcome out = ex != null ? Outcome.error(EIO, String.valueOf(ex)) : o;
            if (out.isOk()) {
                complete(r, NbdReplies.simple(r.cookie, 0), bytes);
            } else {
                failed(r, out, bytes);
            }
        });
    }

    /** Fails a request that would change a read-only export with EPERM; true when it did. */
    private boolean refusedReadOnly(NbdRequest r, long bytes) {
        if (!readOnly) {
            return false;
        }
        fail(r, EPERM, -1, "export " + export.name + " is read-only for this client", bytes);
        return true;
    }

    private boolean flagsAllowed(NbdRequest r, int allowed) {
        return flagsAllowed(r, allowed, 0);
    }

    private boolean flagsAllowed(NbdRequest r, int allowed, long bytes) {
        if ((r.flags & ~allowed) != 0) {
            fail(r, EINVAL, -1, "flags 0x" + Integer.toHexString(r.flags & ~allowed) + " are not valid for "
                    + NbdProtocol.commandName(r.type), bytes);
            return false;
        }
        return true;
    }

    private boolean inRange(NbdRequest r, int error) {
        return inRange(r, error, 0);
    }

    private boolean inRange(NbdRequest r, int error, long bytes) {
        if (!r.inside(export.size)) {
            fail(r, error, -1, "offset " + Long.toUnsignedString(r.offset) + " + length " + r.length
                    + " is beyond the export size " + export.size, bytes);
            return false;
        }
        return true;
    }

    private void fail(NbdRequest r, int error, long offset, String message) {
        fail(r, error, offset, message, 0);
    }

    private void fail(NbdRequest r, int error, long offset, String message, long bytes) {
        failed(r, offset >= 0 ? Outcome.errorAt(error, offset, message) : Outcome.error(error, message), bytes);
    }

    private void failed(NbdRequest r, Outcome o, long bytes) {
        server.log("nbd: " + peer + " " + export.name + " " + r + " failed: " + o);
        complete(r, NbdReplies.error(r.cookie, o, structured), bytes);
    }

    /**
     * Sends a request's reply and ends its accounting; any thread. On the loop's thread the reply
     * joins the batch the loop writes before it next reads or waits.
     */
    private void complete(NbdRequest r, ByteBuffer reply, long bytes) {
        if (writer.onLoopThread()) {
            writer.batch(reply);
            inFlightBytes.addAndGet(-bytes);
            inFlight.decrementAndGet();
            return;
        }
        try {
            writer.send(reply);
        } finally {
            inFlightBytes.addAndGet(-bytes);
            inFlight.decrementAndGet();
            if (wakeLoop) {
                socket.wakeup();
            }
        }
    }
}
