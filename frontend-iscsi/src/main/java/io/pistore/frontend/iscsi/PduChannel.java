package io.pistore.frontend.iscsi;

import io.pistore.integrity.GuardType;
import io.pistore.spi.net.PolitePoll;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Reads and writes whole PDUs on one connection: header, AHS, data padded to 4 bytes, and the
 * CRC32C header and data digests once they are on (sent least significant byte first, as every
 * initiator does). The CRC32C is the project's guard algorithm. A data segment longer than the
 * length this side declared it receives is a protocol error, so memory per PDU stays bounded.
 * Output collects in a buffer that a flush writes; a data segment of {@value #GATHER} bytes or more
 * is not copied: it waits, as a reference, between the pieces of that buffer around it, and a flush
 * writes them all with one gathering write, so the Data-In of the reads answered together leave in
 * full segments (written one by one, each ended in a small one and woke the initiator once more).
 * The caller must leave such a segment's bytes as they are until {@link #hasPending} is false. Not
 * thread-safe: one reader thread, writers serialise on the channel.
 *
 * <p>Input is buffered here: the PDUs an initiator sent at once are parsed from one socket read,
 * and before any read that may block the reader's hook runs ({@link #beforeSocketRead}), so a
 * writer may hold back the answers given while input was still buffered and send them together.
 * A data segment of {@value #GATHER} bytes or more may be read straight into a buffer the reader's
 * {@link Placement} names (a write's pooled direct buffer): from the socket's channel, with no copy
 * through a heap array and none through the JDK's temporary direct buffer.
 */
final class PduChannel {
    /** Runs before the reader goes to the socket for more input. */
    interface Hook {
        void run() throws IOException;
    }

    /** Where a data segment is read into, asked once its PDU's header is in and checked. */
    interface Placement {
        /**
         * A buffer whose remaining bytes, exactly {@code len}, take the data segment of {@code p}
         * (its position and limit are left as they are); null: a new array, {@link Pdu#data}. A PDU
         * whose segment was placed has that buffer as {@link Pdu#placed}.
         */
        ByteBuffer place(Pdu p, int len);
    }

    private static final int IN_BUFFER = 65_536;
    private static final int OUT_BUFFER = 65_536;
    /** The zeros a data segment is padded with (at most 3). */
    private static final byte[] PAD = new byte[3];
    /** A data segment at least this long is not copied into the output buffer. */
    private static final int GATHER = 16_384;
    /** Entries of a gathering write at most: data segments and the buffer's pieces between them. */
    private static final int MOST_GATHERED = 64;
    /** Bytes of data segments that wait for a flush at most, before one is forced. */
    private static final long MOST_GATHERED_BYTES = 4L << 20;

    private final InputStream in;
    /** The same input as {@link #in}, read into direct buffers (no copy through a heap array). */
    private final ReadableByteChannel inChannel;
    private final GatheringByteChannel out;
    private Placement placement;
    private final ByteBuffer outBuf = ByteBuffer.allocateDirect(OUT_BUFFER);
    /** Data segments waiting for the next flush and the pieces of {@link #outBuf} before them, in order. */
    private final ByteBuffer[] gather = new ByteBuffer[MOST_GATHERED];
    private int gathered;
    /** Where in {@link #outBuf} the bytes not yet in {@link #gather} start. */
    private int sliceFrom;
    /** Bytes of the data segments in {@link #gather}. */
    private long gatheredBytes;
    private final Consumer<ByteBuffer> giveBack;
    /** Buffers whose segments were written by reference, given back after the next flush. */
    private final ArrayList<ByteBuffer> toGiveBack = new ArrayList<>();
    private final byte[] buf = new byte[IN_BUFFER];
    private int pos;
    private int lim;
    /**
     * {@link System#nanoTime} after the last socket read that returned bytes: every PDU taken from the
     * input had arrived by then (a replicated volume's reads received together share one read index).
     */
    private long lastReceiveNanos;
    private Hook beforeSocketRead = () -> { };
    /** Polls for input before a read that would block (null: never polls, as during the login). */
    private PolitePoll poll;
    private long spinNanos;
    private PolitePoll.Probe inputReady;
    private BooleanSupplier answered;
    /** PDUs taken from the input since the last socket read. */
    private int pdusSinceRead;
    /** Whether the initiator sends commands without waiting for answers: then it is not polled for. */
    private boolean pipelining;
    private volatile boolean headerDigest;
    private volatile boolean dataDigest;
    private volatile int maxRecvData;

    /**
     * {@code out}: a blocking channel (the socket's); {@code giveBack}: where the buffers of
     * {@link #giveBackOnceWritten} go once nothing of theirs waits here.
     */
    PduChannel(InputStream in, GatheringByteChannel out, int maxRecvData, Consumer<ByteBuffer> giveBack) {
        this(in, Channels.newChannel(in), out, maxRecvData, giveBack);
    }

    /** As above, {@code inChannel} reading the same bytes as {@code in} (the socket's channel and its stream). */
    PduChannel(InputStream in, ReadableByteChannel inChannel, GatheringByteChannel out, int maxRecvData,
            Consumer<ByteBuffer> giveBack) {
        this.in = in;
        this.inChannel = inChannel;
        this.out = out;
        this.maxRecvData = maxRecvData;
        this.giveBack = giveBack;
    }

    void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    void maxRecvData(int n) {
        this.maxRecvData = n;
    }

    /** From now on, data segments of {@value #GATHER} bytes or more may go where {@code p} says. */
    void placeDataWith(Placement p) {
        this.placement = p;
    }

    /** What runs on the reader's thread each time it is about to read the socket (the input buffered here is all used). */
    void beforeSocketRead(Hook hook) {
        this.beforeSocketRead = hook;
    }

    /**
     * From now on, a read that would block first polls the socket (whether bytes wait, {@code
     * FIONREAD}) for up to {@code spinNanos}, adaptively and politely ({@link PolitePoll}), when
     * the initiator is what the connection waits for ({@code answered}: every command was answered,
     * or waits for the initiator's Data-Out) and it does not pipeline: the last socket read brought
     * one PDU, and no byte was waiting once the answers had left (one command at a time cannot be
     * sent before its answer is seen). A command at queue depth 1, and each of its R2T round trips,
     * then costs no kernel wake-up of this thread. 0: never polls.
     */
    void pollBeforeBlocking(long spinNanos, BooleanSupplier answered) {
        this.spinNanos = spinNanos;
        this.answered = answered;
        this.poll = new PolitePoll(true, 0, true); // with 0 it never polls, and counts the blocking waits
        this.inputReady = () -> in.available() > 0 ? 1 : 0;
    }

    /** How this connection waited for input: null before {@link #pollBeforeBlocking}. */
    PolitePoll waits() {
        return poll;
    }

    /** The CRC32C of iSCSI digests over {@code len} bytes of {@code b} at {@code off}. */
    static int crc32c(byte[] b, int off, int len) {
        return (int) GuardType.CRC32C.compute(b, off, len);
    }

    /** The next PDU, or null at a clean end of stream before its first byte. */
    Pdu read() throws IOException {
        if (pos == lim && !fill()) {
            return null;
        }
        byte[] bhs = new byte[Pdu.BHS];
        readFully(bhs, 0, Pdu.BHS);
        Pdu p = new Pdu(bhs, new byte[0], new byte[0]);
        int ahsLen = p.totalAhsLength();
        byte[] ahs = p.ahs;
        if (ahsLen > 0) {
            ahs = new byte[ahsLen];
            readFully(ahs, 0, ahsLen);
            p.ahs = ahs;
        }
        if (headerDigest) {
            int want = readDigest();
            int crc = crc32cOf(bhs, ahs);
            if (want != crc) {
                throw new IscsiProtocolException("header digest error (opcode 0x" + Integer.toHexString(p.opcode()) + ")");
            }
        }
        int len = p.dataSegmentLength();
        if (len > maxRecvData) {
            throw new IscsiProtocolException("data segment of " + len + " bytes, more than the " + maxRecvData
                    + " declared (opcode 0x" + Integer.toHexString(p.opcode()) + ")");
        }
        ByteBuffer to = len >= GATHER && placement != null ? placement.place(p, len) : null;
        int pad = (4 - (len & 3)) & 3;
        if (to != null) {
            readFully(to.duplicate());
            skip(pad);
            if (dataDigest && readDigest() != crc32cPadded(to, pad)) {
                throw new IscsiProtocolException("data digest error (opcode 0x" + Integer.toHexString(p.opcode()) + ")");
            }
            p.placed = to;
        } else {
            byte[] data = len == 0 ? p.data : new byte[len];
            readFully(data, 0, len);
            skip(pad);
            if (dataDigest && len > 0 && readDigest() != crc32cPadded(ByteBuffer.wrap(data), pad)) {
                throw new IscsiProtocolException("data digest error (opcode 0x" + Integer.toHexString(p.opcode()) + ")");
            }
            p.data = data;
        }
        p.receivedNanos = lastReceiveNanos;
        pdusSinceRead++;
        return p;
    }

    /** Writes {@code p} (its data segment length set from its data) and flushes when {@code flush}. */
    void write(Pdu p, boolean flush) throws IOException {
        write(p, p.data, 0, p.data.length, flush);
    }

    /** Writes {@code p} with {@code len} bytes of {@code data} at {@code off} as its data segment. */
    void write(Pdu p, byte[] data, int off, int len, boolean flush) throws IOException {
        write(p, len == 0 ? null : ByteBuffer.wrap(data, off, len), flush);
    }

    /**
     * Writes {@code p} with the remaining bytes of {@code data} (or none) as its data segment;
     * {@code data} is not moved. A segment of {@value #GATHER} bytes or more is written by the next
     * flush, not copied (see the class comment).
     */
    void write(Pdu p, ByteBuffer data, boolean flush) throws IOException {
        int len = data == null ? 0 : data.remaining();
        byte[] bhs = p.bhs;
        bhs[4] = 0;
        bhs[5] = (byte) (len >>> 16);
        bhs[6] = (byte) (len >>> 8);
        bhs[7] = (byte) len;
        int pad = (4 - (len & 3)) & 3;
        int head = bhs.length + (headerDigest ? 4 : 0);
        int after = len == 0 ? 0 : pad + (dataDigest ? 4 : 0);
        boolean byReference = len >= GATHER;
        if (outBuf.remaining() < head + after + (byReference ? 0 : len)
                || byReference && (gathered + 3 > MOST_GATHERED || gatheredBytes + len > MOST_GATHERED_BYTES)) {
            drain();
        }
        outBuf.put(bhs);
        if (headerDigest) {
            putDigest(outBuf, crc32c(bhs, 0, bhs.length));
        }
        if (len > 0) {
            if (byReference) {
                gather[gathered++] = outBuf.slice(sliceFrom, outBuf.position() - sliceFrom);
                gather[gathered++] = data.duplicate();
                gatheredBytes += len;
                sliceFrom = outBuf.position();
            } else {
                outBuf.put(data.duplicate());
            }
            for (int i = 0; i < pad; i++) {
                outBuf.put((byte) 0);
            }
            if (dataDigest) {
                putDigest(outBuf, crc32cPadded(data, pad));
            }
        }
        if (flush) {
            drain();
        }
    }

    void flush() throws IOException {
        drain();
    }

    /** Whether data segments passed by reference wait for a flush. */
    boolean hasPending() {
        return gathered > 0;
    }

    /**
     * Gives {@code b} (null: nothing) back once no segment written by reference waits here: at once,
     * or after the next flush (a failed one too: the connection is over then).
     */
    void giveBackOnceWritten(ByteBuffer b) {
        if (b == null) {
            return;
        }
        if (gathered == 0) {
            giveBack.accept(b);
        } else {
            toGiveBack.add(b);
        }
    }

    /** Writes the output buffer and the data segments between its pieces whole (a blocking channel takes it all, or fails). */
    private void drain() throws IOException {
        try {
            if (gathered == 0) {
                outBuf.flip();
                while (outBuf.hasRemaining()) {
                    out.write(outBuf);
                }
                return;
            }
            if (outBuf.position() > sliceFrom) {
                gather[gathered++] = outBuf.slice(sliceFrom, outBuf.position() - sliceFrom);
            }
            long left = 0;
            for (int i = 0; i < gathered; i++) {
                left += gather[i].remaining();
            }
            int first = 0;
            while (left > 0) {
                left -= out.write(gather, first, gathered - first);
                while (first < gathered && !gather[first].hasRemaining()) {
                    first++;
                }
            }
        } finally {
            Arrays.fill(gather, 0, gathered, null);
            gathered = 0;
            gatheredBytes = 0;
            sliceFrom = 0;
            outBuf.clear();
            toGiveBack.forEach(giveBack);
            toGiveBack.clear();
        }
    }

    private static void putDigest(ByteBuffer b, int crc) {
        b.put((byte) crc).put((byte) (crc >>> 8)).put((byte) (crc >>> 16)).put((byte) (crc >>> 24));
    }

    /** The data digest covers the padding too (zeros). */
    private static int crc32cPadded(ByteBuffer data, int pad) {
        if (pad == 0) {
            return (int) GuardType.CRC32C.compute(data);
        }
        return (int) GuardType.CRC32C.newDigest().update(data).update(PAD, 0, pad).value();
    }

    private static int crc32cOf(byte[] bhs, byte[] ahs) {
        if (ahs.length == 0) {
            return crc32c(bhs, 0, bhs.length);
        }
        byte[] b = new byte[bhs.length + ahs.length];
        System.arraycopy(bhs, 0, b, 0, bhs.length);
        System.arraycopy(ahs, 0, b, bhs.length, ahs.length);
        return crc32c(b, 0, b.length);
    }

    private int readDigest() throws IOException {
        need(4);
        int d = (buf[pos] & 0xff) | (buf[pos + 1] & 0xff) << 8 | (buf[pos + 2] & 0xff) << 16 | (buf[pos + 3] & 0xff) << 24;
        pos += 4;
        return d;
    }

    private void skip(int n) throws IOException {
        if (n > 0) {
            need(n);
            pos += n;
        }
    }

    /** Makes at least {@code n} (at most 4) bytes available in the buffer. */
    private void need(int n) throws IOException {
        while (lim - pos < n) {
            if (!fill()) {
                throw new EOFException("connection closed inside a PDU");
            }
        }
    }

    /** Reads more input after what is buffered (moving that to the front); false at the end of the stream. */
    private boolean fill() throws IOException {
        if (pos == lim) {
            pos = 0;
            lim = 0;
        } else if (lim == buf.length) {
            System.arraycopy(buf, pos, buf, 0, lim - pos);
            lim -= pos;
            pos = 0;
        }
        int n = socketRead(buf, lim, buf.length - lim);
        if (n < 0) {
            return false;
        }
        lim += n;
        return true;
    }

    /** Reads the socket once (blocking), after the reader's hook and, where it applies, a poll. */
    private int socketRead(byte[] b, int off, int len) throws IOException {
        boolean polled = waitForInput();
        int n = in.read(b, off, len);
        received(n, polled);
        return n;
    }

    /** As above, into the remaining bytes of a direct buffer, which it moves. */
    private int socketRead(ByteBuffer to) throws IOException {
        boolean polled = waitForInput();
        int n = inChannel.read(to);
        received(n, polled);
        return n;
    }

    /** Runs the reader's hook and, where it applies, polls; whether the read that follows may block after a poll. */
    private boolean waitForInput() throws IOException {
        beforeSocketRead.run();
        boolean polled = false;
        if (poll != null) {
            boolean ready = in.available() > 0;
            if (pdusSinceRead > 0) {
                pipelining = pdusSinceRead > 1 || ready;
            }
            boolean waits = pipelining || !answered.getAsBoolean();
            if (!ready && (waits || poll.poll(inputReady, spinNanos) == 0)) {
                poll.blocking();
                polled = !waits;
            }
        }
        pdusSinceRead = 0;
        return polled;
    }

    private void received(int n, boolean polled) {
        if (polled && n > 0) {
            poll.wokeUp();
        }
        if (n > 0) {
            lastReceiveNanos = System.nanoTime();
        }
    }

    /** Fills the remaining bytes of {@code to}: from the buffer first, then straight from the socket. */
    private void readFully(ByteBuffer to) throws IOException {
        int n = Math.min(to.remaining(), lim - pos);
        to.put(buf, pos, n);
        pos += n;
        while (to.hasRemaining()) {
            if (socketRead(to) < 0) {
                throw new EOFException("connection closed inside a PDU");
            }
        }
    }

    /** Fills {@code b}: from the buffer first, then (a large rest) straight from the socket. */
    private void readFully(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            if (pos == lim && len >= IN_BUFFER / 2) {
                int n = socketRead(b, off, len);
                if (n < 0) {
                    throw new EOFException("connection closed inside a PDU");
                }
                off += n;
                len -= n;
                continue;
            }
            if (pos == lim && !fill()) {
                throw new EOFException("connection closed inside a PDU");
            }
            int n = Math.min(len, lim - pos);
            System.arraycopy(buf, pos, b, off, n);
            pos += n;
            off += n;
            len -= n;
        }
    }
}
