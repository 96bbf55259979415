package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.soft.LocalWork;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The target's PRACT path (nvmet-rdma): an offloaded command that still asks for PRACT (its host did
 * not insert or strip) has no wire domain, so the transfer is the data alone; the target's NIC
 * generates the PI into its memory domain on a write, checks and strips it on a read; the backend
 * sees PRACT cleared, with the PI in its metadata list, already checked. A raw host QP sends the
 * capsules, since the rdma host always clears PRACT itself. The soft NIC runs local work on its own
 * thread (ASYNC).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TargetPractTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);
    static final int N = 4;
    static final long LBA = 8;

    MemoryTarget backend;
    SoftDevice dev;
    RdmaTarget target;
    ProtectionDomain pd;
    CompletionQueue cq;
    RcConnection conn;
    MemoryRegion cmdMr;
    MemoryRegion rspMr;
    MemoryRegion dataMr;

    @BeforeEach
    void connect() throws Exception {
        backend = new MemoryTarget(F, 64);
        dev = new SoftDevice(true, LocalWork.ASYNC);
        target = new RdmaTarget(dev, "127.0.0.1:0", backend, true);
        pd = dev.allocPd();
        cq = dev.createCq(64);
        ByteBuffer pdata = ByteBuffer.allocate(12).putInt(Capsule.MAGIC).putInt(0).putInt(4).flip();
        conn = dev.connect(target.address(), pd, cq, cq, new QpConfig(16, 16, 1, 1, 7, false), pdata, 1000);
        cmdMr = pd.register(ByteBuffer.allocateDirect(Capsule.SIZE), Access.LOCAL_WRITE);
        rspMr = pd.register(ByteBuffer.allocateDirect(Capsule.SIZE), Access.LOCAL_WRITE);
        dataMr = pd.register(ByteBuffer.allocateDirect(N * 4096), Access.LOCAL_WRITE | Access.REMOTE_READ
                | Access.REMOTE_WRITE);
    }

    @AfterEach
    void close() {
        conn.close();
        target.close();
    }

    /** Sends one offloaded PRACT command over the data buffer ({@code length} wire bytes) and returns the response. */
    Completion send(int op, Protection p, long length) throws Exception {
        RecvWr r = new RecvWr(1);
        r.addSge(rspMr.addr(0), Capsule.SIZE, rspMr.lkey());
        conn.qp().postRecv(r);
        int len = Capsule.encode(cmdMr.buffer(), 0, op, Capsule.F_OFFLOAD | Capsule.F_PRACT, 0, p, N, LBA,
                dataMr.iova(), length, dataMr.rkey(), 0, MemoryTarget.VOLUME.getBytes(StandardCharsets.UTF_8));
        SendWr s = new SendWr(1);
        s.signaled = true;
        s.addSge(cmdMr.addr(0), len, cmdMr.lkey());
        conn.qp().postSend(s);
        WorkCompletion[] w = {new WorkCompletion()};
        while (true) {
            if (cq.poll(w) == 0) {
                cq.await(TimeUnit.MILLISECONDS.toNanos(100));
                continue;
            }
            assertEquals(WcStatus.SUCCESS, w[0].status, w[0].opcode + " " + w[0].status);
            if (w[0].opcode == WcOpcode.RECV) {
                return Capsule.decodeResponse(rspMr.buffer(), 0, LBA);
            }
        }
    }

    @Test
    void aPractWriteMovesTheDataAloneAndTheTargetsNicInsertsThePi() throws Exception {
        byte[] data = new byte[N * 4096];
        new Random(1).nextBytes(data);
        dataMr.buffer().put(0, data);
        Protection pract = Protection.insertStrip(LBA);
        Completion c = send(Capsule.OP_WRITE, pract, N * 4096L);
        assertEquals(Status.SUCCESS, c.status(), c.toString());
        BlockRequest seen = backend.last();
        assertTrue(seen.protection().pract(), "the request reaches the backend as the host sent it");
        assertTrue(seen.hasMetadata(), "the backend gets the PI the NIC generated");
        io.pistore.spi.PiDuty d = backend.duties.get(0);
        assertEquals(io.pistore.spi.PiDuty.Hop.WIRE, d.generator(), "the NIC generated the PI, the engine must not: " + d);
        assertTrue(d.left().isNone(), "the NIC checked every field: " + d);
        byte[] stored = new byte[N * 4096];
        System.arraycopy(backend.data, (int) LBA * 4096, stored, 0, stored.length);
        assertArrayEquals(data, stored);
        byte[] meta = new byte[N * 8];
        System.arraycopy(backend.meta, (int) LBA * 8, meta, 0, meta.length);
        assertNull(Pi.verify(PiContext.builder(F).initialRefTag(LBA).checks(CheckFlags.ALL).build(),
                ScatterList.wrap(data), ScatterList.wrap(meta), N), "Type 1 PI with incrementing ref tags from the LBA");
    }

    @Test
    void aPractReadChecksAndStripsThePiAndAnErrorNamesItsBlock() throws Exception {
        byte[] data = new byte[N * 4096];
        new Random(2).nextBytes(data);
        byte[] meta = new byte[N * 8];
        Pi.generate(PiContext.builder(F).initialRefTag(LBA).build(), ScatterList.wrap(data), ScatterList.wrap(meta), N);
        System.arraycopy(data, 0, backend.data, (int) LBA * 4096, data.length);
        System.arraycopy(meta, 0, backend.meta, (int) LBA * 8, meta.length);
        long sent = System.nanoTime();
        Completion c = send(Capsule.OP_READ, Protection.insertStrip(LBA), N * 4096L);
        long answered = System.nanoTime();
        assertEquals(Status.SUCCESS, c.status(), c.toString());
        long at = backend.last().receivedNanos();
        assertTrue(at - sent > 0 && answered - at > 0, "a read carries when its capsule was in: after the send, "
                + "before the answer (" + (at - sent) + ", " + (answered - at) + " ns)");
        byte[] got = new byte[N * 4096];
        dataMr.buffer().get(0, got);
        assertArrayEquals(data, got, "the data alone crosses the wire");
        io.pistore.spi.PiDuty d = backend.duties.get(backend.duties.size() - 1);
        assertTrue(d.left().isNone(), "the NIC checks and strips the PI on the way out, not the engine: " + d);

        backend.meta[(int) LBA * 8 + 2 * 8] ^= 0x01; // block 2's stored guard
        Completion bad = send(Capsule.OP_READ, Protection.insertStrip(LBA), N * 4096L);
        assertEquals(Status.GUARD_CHECK, bad.status(), bad.toString());
        assertEquals(PiErrorKind.GUARD, bad.piError().kind());
        assertEquals(LBA + 2, bad.errorLba(), "sig_err_offset / (interval + 8) with no PI on the wire");
    }

    @Test
    void aPractCommandSizedAsIfThePiCrossedTheWireIsRefused() throws Exception {
        Completion c = send(Capsule.OP_WRITE, Protection.insertStrip(LBA), N * 4104L);
        assertEquals(Status.INVALID_FIELD, c.status(), c.toString());
        assertTrue(backend.requests.isEmpty());
    }
}
