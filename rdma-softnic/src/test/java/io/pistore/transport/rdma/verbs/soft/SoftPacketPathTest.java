package io.pistore.transport.rdma.verbs.soft;

import static io.pistore.transport.rdma.verbs.soft.SoftQpTest.recv;
import static io.pistore.transport.rdma.verbs.soft.SoftQpTest.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The soft NIC's packet path (two devices that reach each other only over a socket, as two processes
 * do): connection management, SEND/RECV, RDMA WRITE and READ, the responder's checks, RNR, the
 * packet CRC with retransmission, disconnect and a vanished peer.
 */
class SoftPacketPathTest {
    @AfterEach
    void removeTaps() {
        SoftFabric.setPacketTap(null);
        SoftFabric.setWireTap(null);
    }

    static SendWr rdma(WrOpcode op, MemoryRegion local, int len, MemoryRegion remote, long remoteOff, long id) {
        SendWr w = new SendWr(1);
        w.opcode = op;
        w.wrId = id;
        w.signaled = true;
        w.addSge(local.iova(), len, local.lkey());
        w.remoteAddr = remote.iova() + remoteOff;
        w.rkey = remote.rkey();
        return w;
    }

    @Test
    void connectCarriesPrivateDataAndSendsConsumeReceivesInOrder() throws Exception {
        try (PacketPair p = new PacketPair()) {
            assertEquals(3, p.privateDataSeen.remaining());
            assertEquals("ctx", p.target.context());
            assertTrue(((SoftQp) p.hq()).link != null, "the connection runs over the packet path");
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(128), Access.LOCAL_WRITE);
            p.tq().postRecv(recv(dst, 0, 64, 1));
            p.tq().postRecv(recv(dst, 64, 64, 2));
            src.buffer().put(0, (byte) 7);
            p.hq().postSend(send(src, 10, 11, false));
            List<WorkCompletion> first = PacketPair.await(p.targetCq, 1);
            src.buffer().put(0, (byte) 8);
            p.hq().postSend(send(src, 20, 12, true));
            List<WorkCompletion> h = PacketPair.await(p.hostCq, 1);
            List<WorkCompletion> t = PacketPair.await(p.targetCq, 1);
            assertEquals(1, first.get(0).wrId);
            assertEquals(10, first.get(0).byteLen);
            assertEquals(2, t.get(0).wrId);
            assertEquals(20, t.get(0).byteLen);
            assertEquals(7, dst.buffer().get(0));
            assertEquals(8, dst.buffer().get(64));
            assertEquals(1, h.size(), "unsignalled work completes silently");
            assertEquals(12, h.get(0).wrId);
            assertEquals(WcOpcode.SEND, h.get(0).opcode);
        }
    }

    @Test
    void rdmaWriteAndReadMoveOnlyEachSidesOwnMemory() throws Exception {
        try (PacketPair p = new PacketPair()) {
            MemoryRegion hostBuf = p.hostPd.register(ByteBuffer.allocateDirect(4096),
                    Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            MemoryRegion tgt = p.targetPd.register(ByteBuffer.allocate(4096), Access.LOCAL_WRITE);
            for (int i = 0; i < 4096; i++) {
                hostBuf.buffer().put(i, (byte) (i * 31));
            }
            p.tq().postSend(rdma(WrOpcode.RDMA_READ, tgt, 4096, hostBuf, 0, 1));
            List<WorkCompletion> c = PacketPair.await(p.targetCq, 1);
            assertEquals(WcStatus.SUCCESS, c.get(0).status);
            assertEquals(WcOpcode.RDMA_READ, c.get(0).opcode);
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) (i * 31), tgt.buffer().get(i));
                tgt.buffer().put(i, (byte) (i * 7));
            }
            p.tq().postSend(rdma(WrOpcode.RDMA_WRITE, tgt, 1024, hostBuf, 2048, 2));
            assertEquals(WcStatus.SUCCESS, PacketPair.await(p.targetCq, 1).get(0).status);
            for (int i = 0; i < 1024; i++) {
                assertEquals((byte) (i * 7), hostBuf.buffer().get(2048 + i));
            }
            assertEquals((byte) (2047 * 31), hostBuf.buffer().get(2047), "nothing outside the range is written");
        }
    }

    @Test
    void keysRightsAndBoundsAreCheckedAtTheResponder() throws Exception {
        try (PacketPair p = new PacketPair()) {
            MemoryRegion src = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion ro = p.hostPd.register(ByteBuffer.allocate(64), Access.REMOTE_READ);
            p.tq().postSend(rdma(WrOpcode.RDMA_WRITE, src, 8, ro, 0, 1));
            assertEquals(WcStatus.REM_ACCESS_ERR, PacketPair.await(p.targetCq, 1).get(0).status, "no REMOTE_WRITE right");
            assertEquals(QpState.ERROR, p.tq().state(), "an access error moves the requester to the error state");
        }
        try (PacketPair p = new PacketPair()) {
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion ro = p.hostPd.register(ByteBuffer.allocate(64), Access.REMOTE_READ);
            p.tq().postSend(rdma(WrOpcode.RDMA_READ, dst, 64, ro, 8, 1));
            assertEquals(WcStatus.REM_ACCESS_ERR, PacketPair.await(p.targetCq, 1).get(0).status, "beyond the MR");
        }
        try (PacketPair p = new PacketPair()) {
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion rw = p.hostPd.register(ByteBuffer.allocate(64), Access.REMOTE_READ);
            SendWr w = rdma(WrOpcode.RDMA_READ, dst, 8, rw, 0, 1);
            w.rkey = rw.rkey() + 1; // another variant of the key: stale
            p.tq().postSend(w);
            assertEquals(WcStatus.REM_ACCESS_ERR, PacketPair.await(p.targetCq, 1).get(0).status, "a stale key");
        }
    }

    @Test
    void receiverNotReadyRetriesThenFailsOrGoesOn() throws Exception {
        try (PacketPair p = new PacketPair(new QpConfig(8, 8, 1, 1, 2, false), Pair.cfg())) {
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            p.hq().postSend(send(src, 8, 1, true));
            List<WorkCompletion> h = PacketPair.await(p.hostCq, 1);
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, h.get(0).status);
            assertEquals(QpState.ERROR, p.hq().state());
        }
        try (PacketPair p = new PacketPair()) { // rnr retry 7: forever, until a receive is posted
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            src.buffer().put(0, (byte) 1);
            AtomicInteger rnrNaks = count(SoftPackets.NAK_RNR);
            p.hq().postSend(send(src, 8, 1, true));
            p.hq().postSend(send(src, 8, 2, true)); // behind the first (RC order)
            Eventually.await("three RNR NAKs", () -> rnrNaks.get() >= 3);
            assertTrue(Pair.drain(p.hostCq).isEmpty(), "the SENDs wait for receives");
            p.tq().postRecv(recv(dst, 0, 32, 5));
            p.tq().postRecv(recv(dst, 32, 32, 6));
            List<WorkCompletion> h = PacketPair.await(p.hostCq, 2);
            assertEquals(2, h.size());
            assertEquals(1, h.get(0).wrId);
            assertEquals(2, h.get(1).wrId);
            assertEquals(WcStatus.SUCCESS, h.get(1).status);
            List<WorkCompletion> t = PacketPair.await(p.targetCq, 2);
            assertEquals(5, t.get(0).wrId);
            assertEquals(6, t.get(1).wrId);
        }
    }

    /** Counts the frames of opcode {@code op} from now on (either direction). */
    static AtomicInteger count(int op) {
        AtomicInteger seen = new AtomicInteger();
        SoftFabric.setPacketTap((f, len) -> {
            if (SoftPackets.op(f) == op) {
                seen.incrementAndGet();
            }
        });
        return seen;
    }

    /** Flips one bit of the payload of the first frame of opcode {@code op} after its CRC was computed. */
    static AtomicInteger flipOnce(int op) {
        AtomicInteger flipped = new AtomicInteger();
        SoftFabric.setPacketTap((f, len) -> {
            if (SoftPackets.op(f) == op && len > SoftPackets.HEADER + 100 && flipped.compareAndSet(0, 1)) {
                f[SoftPackets.HEADER + 100] ^= 0x10;
            }
        });
        return flipped;
    }

    @Test
    void aCorruptedWriteIsDroppedForItsCrcAndSentAgain() throws Exception {
        try (PacketPair p = new PacketPair()) {
            MemoryRegion hostBuf = p.hostPd.register(ByteBuffer.allocate(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemoryRegion tgt = p.targetPd.register(ByteBuffer.allocate(4096), Access.LOCAL_WRITE);
            for (int i = 0; i < 4096; i++) {
                tgt.buffer().put(i, (byte) (i * 13));
            }
            long dropped = SoftFabric.packetsDroppedForCrc();
            long resent = SoftFabric.packetsRetransmitted();
            AtomicInteger flipped = flipOnce(SoftPackets.WRITE);
            p.tq().postSend(rdma(WrOpcode.RDMA_WRITE, tgt, 4096, hostBuf, 0, 1));
            assertEquals(WcStatus.SUCCESS, PacketPair.await(p.targetCq, 1).get(0).status);
            assertEquals(1, flipped.get());
            assertTrue(SoftFabric.packetsDroppedForCrc() > dropped, "the corrupted frame was dropped");
            assertTrue(SoftFabric.packetsRetransmitted() > resent, "and sent again");
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) (i * 13), hostBuf.buffer().get(i), "byte " + i);
            }
        }
    }

    @Test
    void aCorruptedReadResponseIsDroppedAndTheReadAskedAgain() throws Exception {
        try (PacketPair p = new PacketPair()) {
            MemoryRegion hostBuf = p.hostPd.register(ByteBuffer.allocate(4096), Access.REMOTE_READ);
            MemoryRegion tgt = p.targetPd.register(ByteBuffer.allocate(4096), Access.LOCAL_WRITE);
            for (int i = 0; i < 4096; i++) {
                hostBuf.buffer().put(i, (byte) (i * 3));
            }
            AtomicInteger flipped = flipOnce(SoftPackets.READ_RESP);
            p.tq().postSend(rdma(WrOpcode.RDMA_READ, tgt, 4096, hostBuf, 0, 1));
            assertEquals(WcStatus.SUCCESS, PacketPair.await(p.targetCq, 1).get(0).status);
            assertEquals(1, flipped.get());
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) (i * 3), tgt.buffer().get(i), "byte " + i);
            }
        }
    }

    @Test
    void aConnectionRefusedByTheHandlerCarriesItsMessage() throws Exception {
        SoftDevice a = new SoftDevice(true, LocalWork.INLINE, true);
        SoftDevice b = new SoftDevice(true, LocalWork.INLINE, true);
        Listener l = b.listen("127.0.0.1:0", new ConnectHandler() {
            @Override
            public Accept onConnectRequest(String peer, ByteBuffer privateData) throws IOException {
                throw new IOException("no such volume set");
            }

            @Override
            public void onEstablished(RcConnection c) {
            }

            @Override
            public void onDisconnected(RcConnection c) {
            }
        });
        try {
            VerbsException e = assertThrows(VerbsException.class, () -> a.connect(l.address(), a.allocPd(),
                    a.createCq(8), a.createCq(8), Pair.cfg(), null, 5000));
            assertEquals(VerbsException.ECONNREFUSED, e.errno());
            assertTrue(e.getMessage().contains("rejected: no such volume set"), e.getMessage());
        } finally {
            l.close();
        }
    }

    @Test
    void nothingListeningIsRefusedAndSilenceTimesOut() throws Exception {
        SoftDevice a = new SoftDevice(true, LocalWork.INLINE, true);
        int free;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            free = s.getLocalPort();
        }
        VerbsException refused = assertThrows(VerbsException.class, () -> a.connect("127.0.0.1:" + free, a.allocPd(),
                a.createCq(8), a.createCq(8), Pair.cfg(), null, 5000));
        assertEquals(VerbsException.ECONNREFUSED, refused.errno());
        assertTrue(refused.getMessage().contains("no soft RDMA listener at 127.0.0.1:" + free), refused.getMessage());
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            VerbsException t = assertThrows(VerbsException.class, () -> a.connect("127.0.0.1:" + silent.getLocalPort(),
                    a.allocPd(), a.createCq(8), a.createCq(8), Pair.cfg(), null, 300));
            assertEquals(VerbsException.ETIMEDOUT, t.errno(), t.getMessage());
        }
    }

    @Test
    void closeSendsADisconnectThatFlushesThePeer() throws Exception {
        try (PacketPair p = new PacketPair()) {
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion hb = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            p.tq().postRecv(recv(dst, 0, 32, 1));
            p.hq().postRecv(recv(hb, 0, 32, 9));
            p.host.close();
            List<WorkCompletion> h = Pair.drain(p.hostCq);
            assertEquals(WcStatus.WR_FLUSH_ERR, h.get(0).status);
            assertEquals(9, h.get(0).wrId);
            List<WorkCompletion> t = PacketPair.await(p.targetCq, 1);
            assertEquals(WcStatus.WR_FLUSH_ERR, t.get(0).status);
            assertEquals(QpState.ERROR, p.tq().state());
            Eventually.await("the passive side to hear of the disconnect", () -> {
                synchronized (p.disconnects) {
                    return !p.disconnects.isEmpty();
                }
            });
            synchronized (p.disconnects) {
                assertEquals(1, p.disconnects.size(), "the passive side hears of the disconnect");
            }
            assertThrows(VerbsException.class, () -> p.hq().postSend(send(hb, 8, 1, true)));
        }
    }

    @Test
    void aPeerThatVanishesEndsOutstandingWorkWithRetryExceeded() throws Exception {
        try (PacketPair p = new PacketPair()) {
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            AtomicInteger rnrNaks = count(SoftPackets.NAK_RNR);
            p.hq().postSend(send(src, 8, 1, true)); // no receive posted: it stays in flight
            p.hq().postSend(send(src, 8, 2, true));
            Eventually.await("the target to answer the SEND with an RNR NAK", () -> rnrNaks.get() > 0);
            assertTrue(Pair.drain(p.hostCq).isEmpty());
            ((SoftQp) p.tq()).link.sever(); // as a kill -9 of the target's process: no DREQ
            List<WorkCompletion> h = PacketPair.await(p.hostCq, 2);
            assertEquals(WcStatus.RETRY_EXC_ERR, h.get(0).status);
            assertEquals(WcStatus.WR_FLUSH_ERR, h.get(1).status);
            assertEquals(QpState.ERROR, p.hq().state());
            assertFalse(p.hq().state() == QpState.RTS);
        }
    }
}
