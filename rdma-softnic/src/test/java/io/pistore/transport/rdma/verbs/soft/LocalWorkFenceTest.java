package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.ScatterList;
import io.pistore.spi.Protection;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Local work (REG_MR_INTEGRITY, LOCAL_INV) executed by the NIC after the post returned, and the
 * ordering rules around it: a fenced WR waits for the QP's earlier local work, an unfenced one may
 * overtake it, and the WR after a registration is fenced whether or not it asks (mlx5's next_fence).
 */
class LocalWorkFenceTest {
    static final int N = 8;

    /** A host integrity MR over N blocks of 512 (PRACT write attributes), not yet registered. */
    static IntegrityMr hostMr(Pair p) throws Exception {
        IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
        mr.map(ScatterList.wrap(new byte[N * 512]), ScatterList.of(), 4096);
        SignatureMapping.setHostAttrs(mr.sigAttrs(), IntegrityMrModelTest.F, true, Protection.insertStrip(1), false);
        mr.sigAttrs().checkMask = 0;
        return mr;
    }

    static SendWr send(MemoryRegion msg, boolean fence) {
        SendWr s = new SendWr(1);
        s.opcode = WrOpcode.SEND;
        s.signaled = true;
        s.fence = fence;
        s.addSge(msg.addr(0), 8, msg.lkey());
        return s;
    }

    static SendWr inv(int key) {
        SendWr w = new SendWr(1);
        w.opcode = WrOpcode.LOCAL_INV;
        w.invalidateKey = key;
        return w;
    }

    static void targetRecv(Pair p) throws Exception {
        MemoryRegion b = p.targetPd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
        RecvWr r = new RecvWr(1);
        r.addSge(b.addr(0), 64, b.lkey());
        p.tq().postRecv(r);
    }

    static long recvs(List<WorkCompletion> l) {
        return l.stream().filter(w -> w.opcode == WcOpcode.RECV && w.status == WcStatus.SUCCESS).count();
    }

    @Test
    void localWorkExecutesOnlyWhenTheNicRunsIt() throws Exception {
        try (Pair p = new Pair(LocalWork.MANUAL)) {
            IntegrityMr mr = hostMr(p);
            int before = mr.rkey();
            SendWr reg = IntegrityMrModelTest.reg(mr, IntegrityMrModelTest.REMOTE);
            p.hq().postSend(reg);
            assertEquals(before, mr.rkey(), "the post returned before the registration executed");
            assertEquals(1, p.dev.pendingLocalWork(WrOpcode.REG_MR_INTEGRITY));
            assertTrue(mr.needsInvalidate(), "need_inval is set when the registration is posted");
            assertEquals(1, p.dev.runLocalWork(null));
            assertEquals(reg.key, mr.rkey(), "the new key is in place");
            assertEquals(0, p.dev.pendingLocalWork(null));
        }
    }

    @Test
    void theWrAfterARegistrationIsFencedWithoutAsking() throws Exception {
        try (Pair p = new Pair(LocalWork.MANUAL)) {
            IntegrityMr mr = hostMr(p);
            MemoryRegion msg = p.hostPd.register(ByteBuffer.allocateDirect(8), Access.LOCAL_WRITE);
            targetRecv(p);
            SendWr reg = IntegrityMrModelTest.reg(mr, IntegrityMrModelTest.REMOTE);
            reg.next = send(msg, false);
            p.hq().postSend(reg);
            assertEquals(0, recvs(Pair.drain(p.targetCq)), "the SEND that would hand out the key waits for the REG");
            p.dev.runLocalWork(null);
            assertEquals(1, recvs(Pair.await(p.targetCq)));
            WorkCompletion rd = IntegrityMrModelTest.targetRead(p, reg.key, N * 520);
            assertEquals(WcStatus.SUCCESS, rd.status, "the key the message names is valid when it arrives");
            mr.checkStatus(new MrStatus());
        }
    }

    @Test
    void anUnfencedWrOvertakesEarlierLocalWork() throws Exception {
        try (Pair p = new Pair(LocalWork.MANUAL)) {
            IntegrityMr mr = hostMr(p);
            p.hq().postSend(IntegrityMrModelTest.reg(mr, IntegrityMrModelTest.REMOTE));
            p.dev.runLocalWork(null);
            int key = mr.rkey();
            MemoryRegion msg = p.hostPd.register(ByteBuffer.allocateDirect(8), Access.LOCAL_WRITE);
            targetRecv(p);
            SendWr inv = inv(key);
            inv.next = send(msg, false);
            p.hq().postSend(inv);
            assertEquals(1, recvs(Pair.drain(p.targetCq)), "an unfenced SEND does not wait for the LOCAL_INV");
            assertEquals(WcStatus.SUCCESS, IntegrityMrModelTest.targetRead(p, key, N * 520).status,
                    "the invalidate has not executed yet");
            p.dev.runLocalWork(null);
            assertEquals(WcStatus.REM_ACCESS_ERR, IntegrityMrModelTest.targetRead(p, key, N * 520).status);
        }
    }

    @Test
    void aFencedWrWaitsForEarlierLocalWork() throws Exception {
        try (Pair p = new Pair(LocalWork.MANUAL)) {
            IntegrityMr mr = hostMr(p);
            p.hq().postSend(IntegrityMrModelTest.reg(mr, IntegrityMrModelTest.REMOTE));
            p.dev.runLocalWork(null);
            int key = mr.rkey();
            MemoryRegion msg = p.hostPd.register(ByteBuffer.allocateDirect(8), Access.LOCAL_WRITE);
            targetRecv(p);
            SendWr inv = inv(key);
            inv.next = send(msg, true);
            p.hq().postSend(inv);
            assertEquals(0, recvs(Pair.drain(p.targetCq)), "SendWr.fence: the SEND waits for the LOCAL_INV");
            assertEquals(1, p.dev.runLocalWork(WrOpcode.LOCAL_INV));
            assertEquals(1, recvs(Pair.await(p.targetCq)));
            assertEquals(WcStatus.REM_ACCESS_ERR, IntegrityMrModelTest.targetRead(p, key, N * 520).status,
                    "by the time the message arrived the key was invalid");
        }
    }

    @Test
    void asyncLocalWorkRunsOnTheNicsThreadInPostingOrder() throws Exception {
        try (Pair p = new Pair(LocalWork.ASYNC)) {
            IntegrityMr mr = hostMr(p);
            MemoryRegion msg = p.hostPd.register(ByteBuffer.allocateDirect(8), Access.LOCAL_WRITE);
            targetRecv(p);
            SendWr reg = IntegrityMrModelTest.reg(mr, IntegrityMrModelTest.REMOTE);
            reg.next = send(msg, false);
            p.hq().postSend(reg);
            List<WorkCompletion> l = Pair.await(p.targetCq);
            assertEquals(1, recvs(l));
            assertEquals(WcStatus.SUCCESS, IntegrityMrModelTest.targetRead(p, reg.key, N * 520).status);
        }
    }
}
