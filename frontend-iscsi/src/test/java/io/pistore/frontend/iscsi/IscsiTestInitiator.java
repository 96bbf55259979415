package io.pistore.frontend.iscsi;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A small iSCSI initiator for tests: logs in to one target with the given operational keys (no
 * digests), sends SCSI commands with CDBs of any length (an extended CDB AHS past 16 bytes), answers
 * R2Ts with Data-Out bursts, and gathers Data-In and the status, one command at a time; or, for
 * tests of the task set, sends commands, task management and pings without waiting and hands back
 * each PDU the target sends. Public for other modules' tests (the frontend's test jar).
 */
public final class IscsiTestInitiator implements AutoCloseable {
    public record Result(int status, byte[] sense, byte[] dataIn, int r2ts, int residualFlags, long residual) {
        public int senseKey() {
            return sense.length > 2 ? sense[2] & 0x0f : -1;
        }

        /** ASC and ASCQ, as one number ({@code 0x2A06}). */
        public int ascq() {
            return sense.length > 13 ? (sense[12] & 0xff) << 8 | sense[13] & 0xff : -1;
        }

        public long information() {
            return sense.length > 6 && (sense[0] & 0x80) != 0 ? Pdu.getInt(sense, 3) & 0xFFFFFFFFL : -1;
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int itt = 1;
    private long cmdSn = 1;
    private int maxRecv = 8192;
    final Map<String, String> answers;

    public IscsiTestInitiator(InetSocketAddress portal, String target, String... keys) throws IOException {
        this(portal, target, DEFAULT_ISID, keys);
    }

    /** The ISID the initiator logs in with unless told another: type 01b (random), the rest zero. */
    static final long DEFAULT_ISID = 0x4000_0000_0000L;

    /** Logs in with the 48-bit {@code isid}: with the initiator name, it names the I_T nexus. */
    IscsiTestInitiator(InetSocketAddress portal, String target, long isid, String... keys) throws IOException {
        socket = new Socket(portal.getAddress(), portal.getPort());
        socket.setSoTimeout(20_000);
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        socket.setTcpNoDelay(true); // each PDU leaves whole at its flush, none waits for an ACK
        out = new java.io.BufferedOutputStream(socket.getOutputStream(), 1 << 16);
        Map<String, String> k = new LinkedHashMap<>();
        k.put("InitiatorName", "iqn.2026-12.io.pistore:test-initiator");
        k.put("SessionType", "Normal");
        k.put("TargetName", target);
        k.put("AuthMethod", "None");
        for (int i = 0; i < keys.length; i += 2) {
            k.put(keys[i], keys[i + 1]);
        }
        byte[] data = TextKeys.format(k);
        Pdu login = new Pdu(new byte[48], new byte[0], data);
        login.set8(0, 0x40 | Pdu.LOGIN).set8(1, 0x80 | 0x03); // T, security straight to full feature
        for (int i = 0; i < 6; i++) {
            login.set8(8 + i, (int) (isid >>> (40 - 8 * i)) & 0xff);
        }
        login.set32(16, itt++).set32(24, cmdSn);
        send(login, new byte[0]);
        Pdu r = read();
        if (r.opcode() != Pdu.LOGIN_RESPONSE || r.u16(36) != 0) {
            throw new IOException("login refused: status 0x" + Integer.toHexString(r.u16(36)));
        }
        answers = TextKeys.parse(r.data);
        String mrdsl = answers.get("MaxRecvDataSegmentLength");
        if (mrdsl != null) {
            maxRecv = Integer.parseInt(mrdsl);
        }
    }

    /**
     * Sends a command: {@code dataOut} goes as immediate data up to {@code immediate} bytes and the
     * rest as R2T asks; {@code edtl} is the expected data transfer length.
     */
    public Result command(byte[] cdb, byte[] dataOut, int immediate, long edtl, boolean read) throws IOException {
        int tag = itt++;
        byte[] ahs = new byte[0];
        if (cdb.length > 16) {
            int len = cdb.length - 15;
            ahs = new byte[(3 + len + 3) & ~3];
            ahs[0] = (byte) (len >>> 8);
            ahs[1] = (byte) len;
            ahs[2] = 1;
            System.arraycopy(cdb, 16, ahs, 4, cdb.length - 16);
        }
        int imm = Math.min(immediate, dataOut.length);
        Pdu c = new Pdu(new byte[48], ahs, java.util.Arrays.copyOf(dataOut, imm));
        c.set8(0, Pdu.SCSI_COMMAND).set8(1, 0x80 | (read ? 0x40 : 0) | (dataOut.length > 0 ? 0x20 : 0));
        c.set8(4, ahs.length / 4);
        c.set32(16, tag).set32(20, edtl).set32(24, cmdSn++);
        System.arraycopy(cdb, 0, c.bhs, 32, Math.min(16, cdb.length));
        send(c, ahs);
        java.io.ByteArrayOutputStream dataIn = new java.io.ByteArrayOutputStream();
        int r2ts = 0;
        while (true) {
            Pdu p = read();
            switch (p.opcode()) {
                case Pdu.R2T: {
                    r2ts++;
                    int off = p.i32(40);
                    int len = p.i32(44);
                    int ttt = p.i32(20);
                    int sn = 0;
                    for (int done = 0; done < len; ) {
                        int n = Math.min(maxRecv, len - done);
                        Pdu d = new Pdu(new byte[48], new byte[0],
                                java.util.Arrays.copyOfRange(dataOut, off + done, off + done + n));
                        d.set8(0, Pdu.DATA_OUT).set8(1, done + n == len ? 0x80 : 0);
                        d.set32(16, tag).set32(20, ttt).set32(36, sn++).set32(40, off + done);
                        send(d, new byte[0]);
                        done += n;
                    }
                    break;
                }
                case Pdu.DATA_IN:
                    dataIn.write(p.data);
                    if ((p.flags() & 0x01) != 0) {
                        return new Result(p.u8(3), new byte[0], dataIn.toByteArray(), r2ts, p.flags() & 0x06, p.u32(44));
                    }
                    break;
                case Pdu.SCSI_RESPONSE: {
                    byte[] sense = p.data.length > 2 ? java.util.Arrays.copyOfRange(p.data, 2, p.data.length) : new byte[0];
                    return new Result(p.u8(3), sense, dataIn.toByteArray(), r2ts, p.flags() & 0x06, p.u32(44));
                }
                default:
                    throw new IOException("unexpected PDU opcode 0x" + Integer.toHexString(p.opcode()));
            }
        }
    }

    /**
     * Sends a command with a CDB of at most 16 bytes and all of {@code data} as immediate data,
     * without waiting; {@code write} with {@code edtl} beyond the data leaves the rest to R2T.
     * Returns its initiator task tag.
     */
    int submit(byte[] cdb, byte[] data, long edtl, boolean write, int attribute) throws IOException {
        int tag = itt++;
        Pdu c = new Pdu(new byte[48], new byte[0], data);
        c.set8(0, Pdu.SCSI_COMMAND).set8(1, 0x80 | (write ? 0x20 : edtl > 0 ? 0x40 : 0) | attribute);
        c.set32(16, tag).set32(20, edtl).set32(24, cmdSn++);
        System.arraycopy(cdb, 0, c.bhs, 32, cdb.length);
        send(c, new byte[0]);
        return tag;
    }

    /** Sends an immediate task management request for LUN 0; returns its tag. */
    int taskManagement(int function, int refItt, long refCmdSn) throws IOException {
        int tag = itt++;
        Pdu t = new Pdu(new byte[48], new byte[0], new byte[0]);
        t.set8(0, 0x40 | Pdu.TASK_MGMT).set8(1, 0x80 | function);
        t.set32(16, tag).set32(20, refItt).set32(24, cmdSn).set32(32, refCmdSn);
        send(t, new byte[0]);
        return tag;
    }

    /** Sends an immediate NOP-Out that asks for an answer; returns its tag. */
    int ping() throws IOException {
        int tag = itt++;
        Pdu n = new Pdu(new byte[48], new byte[0], new byte[0]);
        n.set8(0, 0x40 | Pdu.NOP_OUT).set8(1, 0x80);
        n.set32(16, tag).set32(20, Pdu.RESERVED_TAG).set32(24, cmdSn);
        send(n, new byte[0]);
        return tag;
    }

    /** Sends one Data-Out PDU, the last of its burst, answering an R2T. */
    void dataOut(int tag, int ttt, int offset, byte[] data) throws IOException {
        Pdu d = new Pdu(new byte[48], new byte[0], data);
        d.set8(0, Pdu.DATA_OUT).set8(1, 0x80);
        d.set32(16, tag).set32(20, ttt).set32(36, 0).set32(40, offset);
        send(d, new byte[0]);
    }

    /** The CmdSN the next numbered command will carry. */
    long cmdSn() {
        return cmdSn;
    }

    /** The next PDU from the target, whatever it is. */
    Pdu next() throws IOException {
        return read();
    }

    /** PDUs held back by {@link #hold} until {@link #release}; null: each is sent at once. */
    private java.io.ByteArrayOutputStream held;

    /** Holds the PDUs sent from now on, to go together in one write at {@link #release}. */
    void hold() {
        held = new java.io.ByteArrayOutputStream();
    }

    /** Sends the PDUs held since {@link #hold} in one write. */
    void release() throws IOException {
        byte[] b = held.toByteArray();
        held = null;
        out.write(b);
        out.flush();
    }

    private void send(Pdu p, byte[] ahs) throws IOException {
        int len = p.data.length;
        p.set8(5, len >>> 16).set8(6, len >>> 8).set8(7, len);
        OutputStream o = held != null ? held : out;
        o.write(p.bhs);
        o.write(ahs);
        o.write(p.data);
        o.write(new byte[(4 - (len & 3)) & 3]);
        o.flush();
    }

    private Pdu read() throws IOException {
        return read(in);
    }

    /** Reads one PDU without digests from {@code in}: header and data segment with its padding. */
    static Pdu read(DataInputStream in) throws IOException {
        byte[] bhs = new byte[48];
        in.readFully(bhs);
        Pdu p = new Pdu(bhs, new byte[0], new byte[0]);
        byte[] data = new byte[p.dataSegmentLength()];
        in.readFully(data);
        in.readFully(new byte[(4 - (data.length & 3)) & 3]);
        p.data = data;
        return p;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
