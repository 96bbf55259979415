package io.pistore.frontend.iscsi;

import io.pistore.integrity.GuardType;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Reads and writes whole PDUs on one connection: header, AHS, data padded to 4 bytes, and the
 * CRC32C header and data digests once they are on (sent least significant byte first, as every
 * initiator does). The CRC32C is the project's guard algorithm. A data segment longer than the
 * length this side declared it receives is a protocol error, so memory per PDU stays bounded.
 * Not thread-safe: one reader thread, writers serialise on the channel.
 */
final class PduChannel {
    private final InputStream in;
    private final OutputStream out;
    private volatile boolean headerDigest;
    private volatile boolean dataDigest;
    private volatile int maxRecvData;

    PduChannel(InputStream in, OutputStream out, int maxRecvData) {
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

    /** The CRC32C of iSCSI digests over {@code len} bytes of {@code b} at {@code off}. */
    static int crc32c(byte[] b, int off, int len) {
        return (int) GuardType.CRC32C.compute(b, off, len);
    }

    /** The next PDU, or null at a clean end of stream before its first byte. */
    Pdu read() throws IOException {
        byte[] bhs = new byte[Pdu.BHS];
        int first = in.read();
        if (first < 0) {
            return null;
        }
        bhs[0] = (byte) first;
        readFully(bhs, 1, Pdu.BHS - 1);
        Pdu p = new Pdu(bhs, new byte[0], new byte[0]);
        int ahsLen = p.totalAhsLength();
        byte[] ahs = new byte[ahsLen];
        readFully(ahs, 0, ahsLen);
        p.ahs = ahs;
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
        byte[] data = new byte[len];
        readFully(data, 0, len);
        int pad = (4 - (len & 3)) & 3;
        if (pad > 0) {
            readFully(new byte[pad], 0, pad);
        }
        if (dataDigest && len > 0) {
            int want = readDigest();
            if (want != crc32c(data, 0, len)) {
                throw new IscsiProtocolException("data digest error (opcode 0x" + Integer.toHexString(p.opcode()) + ")");
            }
        }
        p.data = data;
        return p;
    }

    /** Writes {@code p} (its data segment length set from its data) and flushes when {@code flush}. */
    void write(Pdu p, boolean flush) throws IOException {
        write(p, p.data, 0, p.data.length, flush);
    }

    /** Writes {@code p} with {@code len} bytes of {@code data} at {@code off} as its data segment. */
    void write(Pdu p, byte[] data, int off, int len, boolean flush) throws IOException {
        byte[] bhs = p.bhs;
        bhs[4] = 0;
        bhs[5] = (byte) (len >>> 16);
        bhs[6] = (byte) (len >>> 8);
        bhs[7] = (byte) len;
        out.write(bhs);
        if (headerDigest) {
            writeDigest(crc32c(bhs, 0, bhs.length));
        }
        if (len > 0) {
            out.write(data, off, len);
            int pad = (4 - (len & 3)) & 3;
            if (pad > 0) {
                out.write(new byte[pad]);
            }
            if (dataDigest) {
                int crc = crc32cPadded(data, off, len, pad);
                writeDigest(crc);
            }
        }
        if (flush) {
            out.flush();
        }
    }

    void flush() throws IOException {
        out.flush();
    }

    /** The data digest covers the padding too (zeros). */
    private static int crc32cPadded(byte[] data, int off, int len, int pad) {
        if (pad == 0) {
            return crc32c(data, off, len);
        }
        byte[] b = new byte[len + pad];
        System.arraycopy(data, off, b, 0, len);
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
        byte[] d = new byte[4];
        readFully(d, 0, 4);
        return (d[0] & 0xff) | (d[1] & 0xff) << 8 | (d[2] & 0xff) << 16 | (d[3] & 0xff) << 24;
    }

    private void writeDigest(int crc) throws IOException {
        out.write(new byte[] {(byte) crc, (byte) (crc >>> 8), (byte) (crc >>> 16), (byte) (crc >>> 24)});
    }

    private void readFully(byte[] b, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            int n = in.read(b, off + done, len - done);
            if (n < 0) {
                throw new EOFException("connection closed inside a PDU");
            }
            done += n;
        }
    }
}
