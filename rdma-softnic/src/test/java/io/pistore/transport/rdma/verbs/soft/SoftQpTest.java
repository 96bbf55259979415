package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** RC queue pair semantics of the soft NIC. */
class SoftQpTest {
    static SendWr send(MemoryRegion mr, int len, long id, boolean signaled) {
        SendWr w = new SendWr(1);
        w.wrId = id;
        w.signaled = signaled;
        w.addSge(mr.iova(), len, mr.lkey());
        return w;
    }

    static RecvWr recv(MemoryRegion mr, int off, int len, long id) {
        RecvWr r = new RecvWr(1);
        r.wrId = id;
        r.addSge(mr.addr(off), len, mr.lkey());
        return r;
    }

    @Test
    void connectCarriesPrivateDataAndSendsConsumeReceivesInOrder() throws Exception {
        try (Pair p = new Pair()) {
            assertEquals(3, p.privateDataSeen.remaining());
            assertEquals("ctx", p.target.context());
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(128), Access.LOCAL_WRITE);
            p.tq().postRecv(recv(dst, 0, 64, 1));
            p.tq().postRecv(recv(dst, 64, 64, 2));
            src.buffer().put(0, (byte) 7);
            p.hq().postSend(send(src, 10, 11, false)); // unsignalled: no completion
            src.buffer().put(0, (byte) 8);
            p.hq().postSend(send(src, 20, 12, true));
            List<WorkCompletion> t = Pair.await(p.targetCq);
            assertEquals(2, t.size());
            assertEquals(1, t.get(0).wrId);
            assertEquals(10, t.get(0).byteLen);
            assertEquals(2, t.get(1).wrId);
            assertEquals(7, dst.buffer().get(0));
            assertEquals(8, dst.buffer().get(64));
            List<WorkCompletion> h = Pair.drain(p.hostCq);
            assertEquals(1, h.size(), "unsignalled work completes silently");
            assertEquals(12, h.get(0).wrId);
            assertEquals(WcOpcode.SEND, h.get(0).opcode);
        }
    }

    @Test
    void receiverNotReadyRetriesThenFails() throws Exception {
        try (Pair p = new Pair(new QpConfig(8, 8, 1, 1, 2, false), Pair.cfg())) {
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            p.hq().postSend(send(src, 8, 1, true));
            assertTrue(Pair.drain(p.hostCq).isEmpty(), "the SEND waits for a receive");
            List<WorkCompletion> h = PacketPair.await(p.hostCq, 1);
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, h.get(0).status);
            assertEquals(QpState.ERROR, p.hq().state());
        }
        try (Pair p = new Pair()) { // rnr retry 7: forever, until a receive is posted
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            p.hq().postSend(send(src, 8, 1, true));
            p.hq().postSend(send(src, 8, 2, true)); // queued behind the first (RC order)
            // not a synchronisation: the time in which the RNR retries run and must not fail the SEND
            Thread.sleep(20);
            assertTrue(Pair.drain(p.hostCq).isEmpty(), "the SENDs wait for receives");
            p.tq().postRecv(recv(dst, 0, 32, 5));
            p.tq().postRecv(recv(dst, 32, 32, 6));
            List<WorkCompletion> h = PacketPair.await(p.hostCq, 2);
            assertEquals(2, h.size());
            assertEquals(1, h.get(0).wrId);
            assertEquals(2, h.get(1).wrId);
            assertEquals(WcStatus.SUCCESS, h.get(1).status);
        }
    }

    @Test
    void queueLimitsAreEnforcedAndSlotsFreeWhenASignalledCompletionIsPolled() throws Exception {
        try (Pair p = new Pair(new QpConfig(2, 1, 1, 1, 7, false), Pair.cfg())) {
            MemoryRegion src = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(256), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            SendWr w = new SendWr(1);
            w.opcode = WrOpcode.RDMA_WRITE;
            w.addSge(src.iova(), 8, src.lkey());
            w.remoteAddr = dst.iova();
            w.rkey = dst.rkey();
            p.hq().postSend(w);
            p.hq().postSend(w);
            VerbsException e = assertThrows(VerbsException.class, () -> p.hq().postSend(w),
                    "unsignalled WQEs hold their slots");
            assertEquals(VerbsException.ENOMEM, e.errno());
            assertThrows(VerbsException.class, () -> {
                p.hq().postRecv(recv(src, 0, 8, 1));
                p.hq().postRecv(recv(src, 8, 8, 2));
            });
        }
    }

    @Test
    void closeFlushesPostedWorkAndTellsThePeer() throws Exception {
        try (Pair p = new Pair()) {
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion hb = p.hostPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            p.tq().postRecv(recv(dst, 0, 32, 1));
            p.hq().postRecv(recv(hb, 0, 32, 9));
            p.host.close();
            List<WorkCompletion> h = Pair.drain(p.hostCq);
            assertEquals(WcStatus.WR_FLUSH_ERR, h.get(0).status);
            assertEquals(9, h.get(0).wrId);
            List<WorkCompletion> t = Pair.await(p.targetCq);
            assertEquals(WcStatus.WR_FLUSH_ERR, t.get(0).status);
            assertEquals(QpState.ERROR, p.tq().state());
            Eventually.await("the passive side to hear of the disconnect", () -> p.disconnectsHeard() > 0);
            assertEquals(1, p.disconnectsHeard(), "the passive side hears of the disconnect once");
            assertThrows(VerbsException.class, () -> p.hq().postSend(send(hb, 8, 1, true)));
        }
    }

    @Test
    void remoteAccessNeedsTheRightAndTheBounds() throws Exception {
        try (Pair p = new Pair()) {
            MemoryRegion src = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion ro = p.hostPd.register(ByteBuffer.allocate(64), Access.REMOTE_READ);
            SendWr w = new SendWr(1);
            w.opcode = WrOpcode.RDMA_WRITE;
            w.addSge(src.iova(), 8, src.lkey());
            w.remoteAddr = ro.iova();
            w.rkey = ro.rkey();
            p.tq().postSend(w);
            assertEquals(WcStatus.REM_ACCESS_ERR, Pair.await(p.targetCq).get(0).status, "no REMOTE_WRITE right");
        }
        try (Pair p = new Pair()) {
            MemoryRegion dst = p.targetPd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE);
            MemoryRegion ro = p.hostPd.register(ByteBuffer.allocate(64), Access.REMOTE_READ);
            SendWr r = new SendWr(1);
            r.opcode = WrOpcode.RDMA_READ;
            r.addSge(dst.iova(), 64, dst.lkey());
            r.remoteAddr = ro.iova() + 8;
            r.rkey = ro.rkey();
            p.tq().postSend(r);
            assertEquals(WcStatus.REM_ACCESS_ERR, Pair.await(p.targetCq).get(0).status, "beyond the MR");
        }
    }
}
