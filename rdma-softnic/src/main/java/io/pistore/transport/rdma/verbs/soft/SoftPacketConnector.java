package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The active side of connection management on the packet path, within the caller's deadline:
 * connect the socket, REQ with the private data, wait for REP (or REJ with the handler's message),
 * create the QP, RTU. Nothing listening is ECONNREFUSED, silence past the deadline ETIMEDOUT.
 */
final class SoftPacketConnector {
    private SoftPacketConnector() {
    }

    static SoftQp connect(SoftDevice device, String address, SoftPd pd, SoftCq sendCq, SoftCq recvCq, QpConfig config,
                          ByteBuffer privateData, long timeoutMillis) throws VerbsException {
        byte[] pdata = new byte[privateData == null ? 0 : privateData.remaining()];
        if (privateData != null) {
            privateData.duplicate().get(pdata);
        }
        if (pdata.length > 196) {
            throw new VerbsException(VerbsException.EINVAL, "private data is limited to 196 bytes (RDMA_PS_TCP)");
        }
        int colon = address == null ? -1 : address.lastIndexOf(':');
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (RuntimeException e) {
            throw new VerbsException(VerbsException.EINVAL, "soft RDMA connects to HOST:PORT, not '" + address + "'");
        }
        long deadline = System.nanoTime() + Math.max(1, timeoutMillis) * 1_000_000L;
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(address.substring(0, colon), port), remaining(deadline));
            s.setSoTimeout(remaining(deadline));
            DataInputStream in = new DataInputStream(s.getInputStream());
            SoftPackets.writeFrame(s.getOutputStream(), SoftPackets.REQ, pdata);
            byte[] reply = SoftPackets.readFrame(in);
            int op = SoftPackets.op(reply);
            if (op == SoftPackets.REJ) {
                throw new VerbsException(VerbsException.ECONNREFUSED, "connection rejected: "
                        + new String(SoftPackets.payloadOf(reply), StandardCharsets.UTF_8));
            }
            if (op != SoftPackets.REP) {
                throw new IOException("expected REP or REJ, got opcode " + op);
            }
            SoftQp mine = new SoftQp(device, pd, sendCq, recvCq, config, SoftFabric.nextQpNum());
            SoftPackets.writeFrame(s.getOutputStream(), SoftPackets.RTU, new byte[0]);
            s.setSoTimeout(0);
            SoftLink link = new SoftLink(mine, s, "qp" + mine.qpNum());
            mine.link = link;
            link.start();
            return mine;
        } catch (VerbsException e) {
            close(s);
            throw e;
        } catch (ConnectException e) {
            close(s);
            throw new VerbsException(VerbsException.ECONNREFUSED, "no soft RDMA listener at " + address
                    + " (" + e.getMessage() + "; RDMA_CM_EVENT_REJECTED)");
        } catch (SocketTimeoutException e) {
            close(s);
            throw new VerbsException(VerbsException.ETIMEDOUT, "soft RDMA connect to " + address + " timed out after "
                    + timeoutMillis + " ms");
        } catch (IOException e) {
            close(s);
            throw new VerbsException(VerbsException.ECONNREFUSED, "soft RDMA connect to " + address + " failed: "
                    + e.getMessage());
        }
    }

    private static int remaining(long deadline) throws SocketTimeoutException {
        long ms = (deadline - System.nanoTime()) / 1_000_000L;
        if (ms <= 0) {
            throw new SocketTimeoutException("deadline passed");
        }
        return (int) Math.min(Integer.MAX_VALUE, ms);
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing
        }
    }
}
