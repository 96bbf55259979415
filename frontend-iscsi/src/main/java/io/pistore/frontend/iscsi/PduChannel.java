package io.pistore.frontend.iscsi;

import io.pistore.integrity.GuardType;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;

/**
 * Reads and writes whole PDUs on one connection: header, AHS, data padded to 4 bytes, and the
 * CRC32C header and data digests once they are on (sent least significant byte first, as every
 * initiator does). The CRC32C is the project's guard algorithm. A data segment longer than the
 * length this side declared it receives is a protocol error, so memory per PDU stays bounded.
 * Output collects in a buffer that a flush writes; a data segment too large for it leaves with its
 * header in one gathering write. Not thread-safe: one reader thread, writers serialise on the channel.
 *
 * <p>Input is buffered here: the PDUs an initiator sent at once are parsed from one socket read,
 * and before any read that may block the reader's hook runs ({@link #beforeSocketRead}), so a
 * writer may hold back the answers given while input was still buffered and send them together.
 */
final class PduChannel {
    /** Runs before the reader goes to the socket for more input. */
    interface Hook {
        void run() throws IOException;
    }

    private static final int IN_BUFFER = 65_536;
    private static final int OUT_BUFFER = 65_536;
    /** A data segment at least this long is not copied into the output buffer. */
    private static final int GATHER = 16_384;

    private final InputStream in;
    private final GatheringByteChannel out;
    private final ByteBuffer outBuf = ByteBuffer.allocateDirect(OUT_BUFFER);
    /** The padding and data digest after a gathered data segment. */
    private final ByteBuffer tail = ByteBuffer.allocate(8);
    private final ByteBuffer[] gather = new ByteBuffer[3];
    private final byte[] buf = new byte[IN_BUFFER];
    private int pos;
    private int lim;
    /**
     * {@link System#nanoTime} after the last socket read that returned bytes: every PDU taken from the
     * input had arrived by then (a replicated volume's reads received together share one read index).
     */
    private long lastReceiveNanos;
    private Hook beforeSocketRead = () -> { };
    private volatile boolean headerDigest;
    private volatile boolean dataDigest;
    private volatile int maxRecvData;

    /** {@code out}: a blocking channel (the socket's). */
    PduChannel(InputStream in, GatheringByteChannel out, int maxRecvData) {
        this.in = in;
        this.out = out;
        this.maxRecvData = maxRecvData;
    }

    void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    void maxRecvData(int n) {
        this.maxRecvData = n;
    }

    /** What runs on the reader's thread each time it is about to read the socket (the input buffered here is all used). */
    void beforeSocketRead(Hook hook) {
        this.beforeSocketRead = hook;
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
        byte[] data = len == 0 ? p.data : new byte[len];
        readFully(data, 0, len);
        skip((4 - (len & 3)) & 3);
        if (dataDigest && len > 0) {
            int want = readDigest();
            if (want != crc32c(data, 0, len)) {
                throw new IscsiProtocolException("data digest error (opcode 0x" + Integer.toHexString(p.opcode()) + ")");
            }
        }
        p.data = data;
        p.receivedNanos = lastReceiveNanos;
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

    /** Writes {@code p} with the remaining bytes of {@code data} (or none) as its data segment; {@code data} is not moved. */
    void write(Pdu p, ByteBuffer data, boolean flush) throws IOException {
        int len = data == null ? 0 : data.remaining();
        byte[] bhs = p.bhs;
        bhs[4] = 0;
        bhs[5] = (byte) (len >>> 16);
        bhs[6] = (byte) (len >>> 8);
        bhs[7] = (byte) len;
        int pad = (4 - (len & 3)) & 3;
        int head = bhs.length + (headerDigest ? 4 : 0);
        int rest = len == 0 ? 0 : len + pad + (dataDigest ? 4 : 0);
        boolean gathered = len >= GATHER;
        if (outBuf.remaining() < head + (gathered ? 0 : rest)) {
            drain();
        }
        outBuf.put(bhs);
        if (headerDigest) {
            putDigest(outBuf, crc32c(bhs, 0, bhs.length));
        }
        if (len > 0) {
            ByteBuffer after = gathered ? tail.clear() : outBuf;
            if (!gathered) {
                outBuf.put(data.duplicate());
            }
            for (int i = 0; i < pad; i++) {
                after.put((byte) 0);
            }
            if (dataDigest) {
                putDigest(after, crc32cPadded(data, pad));
            }
            if (gathered) {
                outBuf.flip();
                tail.flip();
                gather[0] = outBuf;
                gather[1] = data.duplicate();
                gather[2] = tail;
                try {
                    long left = outBuf.remaining() + (long) len + tail.remaining();
                    while (left > 0) {
                        left -= out.write(gather);
                    }
                } finally {
                    gather[1] = null;
                    outBuf.clear();
                }
                return;
            }
        }
        if (flush) {
            drain();
        }
    }

    void flush() throws IOException {
        drain();
    }

    /** Writes the output buffer whole (a blocking channel takes it all, or fails). */
    private void drain() throws IOException {
        outBuf.flip();
        try {
            while (outBuf.hasRemaining()) {
                out.write(outBuf);
            }
        } finally {
            outBuf.clear();
        }
    }

    private static void putDigest(ByteBuffer b, int crc) {
        b.put((byte) crc).put((byte) (crc >>> 8)).put((byte) (crc >>> 16)).put((byte) (crc >>> 24));
    }

    /** The data digest covers the padding too (zeros). */
    private static int crc32cPadded(ByteBuffer data, int pad) {
        int len = data.remaining();
        if (pad == 0 && data.hasArray()) {
            return crc32c(data.array(), data.arrayOffset() + data.position(), len);
        }
        byte[] b = new byte[len + pad];
        data.duplicate().get(b, 0, len);
        return crc32c(b, 0, b.length);
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

    private void received(int n) {
        if (n > 0) {
            lastReceiveNanos = System.nanoTime();
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
        beforeSocketRead.run();
        int n = in.read(buf, lim, buf.length - lim);
        if (n < 0) {
            return false;
        }
        received(n);
        lim += n;
        return true;
    }

    /** Fills {@code b}: from the buffer first, then (a large rest) straight from the socket. */
    private void readFully(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            if (pos == lim && len >= IN_BUFFER / 2) {
                beforeSocketRead.run();
                int n = in.read(b, off, len);
                if (n < 0) {
                    throw new EOFException("connection closed inside a PDU");
                }
                received(n);
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
