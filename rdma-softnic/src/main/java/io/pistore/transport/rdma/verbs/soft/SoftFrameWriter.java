package io.pistore.transport.rdma.verbs.soft;

import static io.pistore.transport.rdma.verbs.soft.SoftPackets.HEADER;

import io.pistore.transport.rdma.verbs.soft.SoftLink.Packet;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32;

/**
 * The outgoing side of a {@link SoftLink}'s socket: a pool of frame buffers, a ring of frames
 * queued for writing, and the writer thread. Frames are sealed (CRC) and written in the order they
 * were queued, by the writer thread or by a posting thread that finds no one writing; after the
 * stop mark ({@link #stop}) nothing more is written and the socket's output is shut. Invariant: the
 * reader thread only queues, it never writes, so it never waits for the peer; nothing is allocated
 * per frame once the pool is warm.
 */
final class SoftFrameWriter {
    private static final int QUEUE = 1 << 14;
    private static final Packet STOP = new Packet(0);

    private final SoftLink link;
    private final Socket socket;
    /** Frames waiting for the writer: a ring under its own monitor (no allocation per frame, unlike a j.u.c. lock under contention). */
    private final Object outLock = new Object();
    private final Packet[] outRing = new Packet[QUEUE];
    private int outHead;
    private int outCount;
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Under the write lock: the buffered socket stream, the batch, the CRC. */
    private final OutputStream out;
    private final Packet[] batch = new Packet[64];
    private volatile boolean outputDone;
    /** Buffers to reuse: a stack under its own monitor. */
    private final Object freeLock = new Object();
    private final Packet[] freeStack = new Packet[1024];
    private int freeTop;
    private final CRC32 writerCrc = new CRC32();

    /** Writes {@code link}'s frames to {@code socket}; a failed write fails the link. */
    SoftFrameWriter(SoftLink link, Socket socket) throws IOException {
        this.link = link;
        this.socket = socket;
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
    }

    /** Queues the stop mark: frames queued before it are still written. False when the ring is full. */
    boolean stop() {
        return offer(STOP, true);
    }

    /** Writes nothing more from now on (the socket is closing) and lets the writer thread end. */
    void outputDone() {
        outputDone = true;
        wakeWriter();
    }

    /** A pooled buffer for a frame of {@code payload} bytes (header and CRC added). */
    Packet take(int payload) {
        Packet p = null;
        synchronized (freeLock) {
            if (freeTop > 0) {
                p = freeStack[--freeTop];
                freeStack[freeTop] = null;
            }
        }
        if (p == null) {
            p = new Packet(HEADER + payload + SoftPackets.CRC);
        }
        p.ensure(HEADER + payload + SoftPackets.CRC);
        return p;
    }

    /** Returns {@code p} to the pool (not the stop mark, nor an oversized buffer). */
    void recycle(Packet p) {
        if (p != STOP && p.buf.length <= (1 << 20)) {
            synchronized (freeLock) {
                if (freeTop < freeStack.length) {
                    freeStack[freeTop++] = p;
                }
            }
        }
    }

    /** Queues a frame for the writer thread (the reader's responses: the reader never writes itself). */
    void queue(Packet p) {
        queue(p, true);
    }

    /** Queues a frame; {@code wakeWriter} false when the caller writes the queue itself right after. */
    void queue(Packet p, boolean wakeWriter) {
        if (link.down()) {
            recycle(p);
            return;
        }
        if (!offer(p, wakeWriter)) {
            recycle(p);
            link.fail("the send queue of the packet path overflowed");
        }
    }

    private boolean offer(Packet p, boolean wakeWriter) {
        synchronized (outLock) {
            if (outCount == outRing.length) {
                return false;
            }
            outRing[(outHead + outCount) % outRing.length] = p;
            if (outCount++ == 0 && wakeWriter) {
                outLock.notifyAll();
            }
            return true;
        }
    }

    private void wakeWriter() {
        synchronized (outLock) {
            outLock.notifyAll();
        }
    }

    /** Moves up to {@code batch.length} queued frames into {@code batch}; 0 when there are none. */
    private int takeBatch(Packet[] batch) {
        synchronized (outLock) {
            int n = Math.min(outCount, batch.length);
            for (int i = 0; i < n; i++) {
                batch[i] = outRing[outHead];
                outRing[outHead] = null;
                outHead = (outHead + 1) % outRing.length;
            }
            outCount -= n;
            return n;
        }
    }

    /**
     * A posting thread writes what is queued itself when nobody else is writing (one hand-off less
     * per request than through the writer thread); it holds no lock the reader needs while it
     * writes, so a full socket only makes it wait for the peer's reader, which always reads. Else the
     * writer thread, which holds the write lock, finds the frames when it looks again.
     */
    void writeNowOrWake() {
        if (writeLock.tryLock()) {
            try {
                drainAndWrite();
            } finally {
                writeLock.unlock();
            }
            synchronized (outLock) {
                if (outCount == 0) {
                    return;
                }
            }
        }
        wakeWriter();
    }

    /** Writes every queued frame through the buffer and flushes; the write lock is held. */
    private void drainAndWrite() {
        if (outputDone) {
            return;
        }
        boolean stop = false;
        try {
            int n;
            while (!stop && (n = takeBatch(batch)) > 0) {
                for (int i = 0; i < n; i++) {
                    Packet p = batch[i];
                    batch[i] = null;
                    if (p == STOP) {
                        stop = true;
                    } else if (!stop) {
                        SoftPackets.seal(writerCrc, p.buf, p.len);
                        SoftFabric.packetTap(p.buf, p.len);
                        out.write(p.buf, 0, p.len);
                    }
                    recycle(p);
                }
            }
            out.flush();
            if (stop) {
                outputDone = true;
                socket.shutdownOutput();
                wakeWriter();
            }
        } catch (IOException e) {
            outputDone = true;
            wakeWriter();
            link.fail("packet path write failed: " + e.getMessage());
        }
    }

    /** The writer thread: writes what the reader and the timers queue, and what posting threads left. */
    void writeLoop() {
        try {
            while (!outputDone) {
                synchronized (outLock) {
                    while (outCount == 0 && !outputDone) {
                        outLock.wait();
                    }
                }
                writeLock.lock();
                try {
                    drainAndWrite();
                } finally {
                    writeLock.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
