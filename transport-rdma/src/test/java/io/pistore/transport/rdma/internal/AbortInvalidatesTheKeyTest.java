package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A request whose registration was posted but whose command SEND was refused ends with a transport
 * error, and the integrity MR goes back to the pool only after its key was invalidated: a peer using
 * the old key is refused (REM_ACCESS_ERR), and the MR is reused cleanly. Also pins that the host
 * fences the WR after each registration.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AbortInvalidatesTheKeyTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    @Test
    void theKeyOfAnAbortedRegistrationIsRefusedAndTheMrIsReused() throws Exception {
        SoftDevice soft = new SoftDevice(true);
        FaultyDevice dev = new FaultyDevice(soft);
        MemoryTarget backend = new MemoryTarget(F, 16);
        RdmaTarget target = new RdmaTarget(soft, "127.0.0.1:0", backend, true);
        // depth 1: the pool has one MR, so the next request reuses the aborted one's
        RdmaHostConnection host = new RdmaHostConnection("soft", dev, new RdmaOptions("soft", RdmaOptions.PiMode.AUTO),
                target.address(), new ConnectOptions(1, 1));
        try {
            byte[] data = new byte[4096];
            Arrays.fill(data, (byte) 0x42);
            dev.refuseAfterNextRegistration = true;
            Completion c = host.queue(0).submit(BlockRequest.write(MemoryTarget.VOLUME, 1, 1, ScatterList.wrap(data),
                    null, Protection.insertStrip(1), false)).get(10, TimeUnit.SECONDS);
            assertEquals(Status.TRANSPORT_ERROR, c.status(), c.toString());
            assertTrue(c.message().contains("refused by the test"), c.message());
            int oldKey = dev.refusedRegistrationKey;
            assertNotEquals(0, oldKey);

            assertEquals(WcStatus.REM_ACCESS_ERR, readWithKey(soft, dev, oldKey),
                    "the aborted registration's key must not reach the host's memory any more");

            Completion ok = host.queue(0).submit(BlockRequest.write(MemoryTarget.VOLUME, 2, 1, ScatterList.wrap(data),
                    null, Protection.insertStrip(2), false)).get(10, TimeUnit.SECONDS);
            assertEquals(Status.SUCCESS, ok.status(), ok.toString());
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, host.queue(0).submit(BlockRequest.read(MemoryTarget.VOLUME, 2, 1,
                    ScatterList.wrap(back), null, Protection.insertStrip(2))).get(10, TimeUnit.SECONDS).status());
            assertArrayEquals(data, back);
            assertEquals(3, dev.registrations);
            assertEquals(dev.registrations, dev.fencedAfterRegistration,
                    "the WR after a registration carries the fence (mlx5 sets it itself)");
        } finally {
            host.close();
            target.close();
        }
    }

    /** A peer of the host's PD RDMA-READs one 4096+8 block at address 0 with {@code key}; the completion status. */
    private static WcStatus readWithKey(SoftDevice soft, FaultyDevice dev, int key) throws Exception {
        QpConfig cfg = new QpConfig(8, 8, 1, 1, 7, false);
        CompletionQueue hostSideCq = soft.createCq(16);
        Listener l = soft.listen("127.0.0.1:0", new ConnectHandler() {
            @Override
            public Accept onConnectRequest(String peer, ByteBuffer pd) {
                return new Accept(dev.connectedPd, hostSideCq, hostSideCq, cfg, null);
            }

            @Override
            public void onEstablished(RcConnection c) {
            }

            @Override
            public void onDisconnected(RcConnection c) {
            }
        });
        var pd = soft.allocPd();
        CompletionQueue cq = soft.createCq(16);
        RcConnection probe = soft.connect(l.address(), pd, cq, cq, cfg, null, 1000);
        try {
            MemoryRegion buf = pd.register(ByteBuffer.allocateDirect(4104), Access.LOCAL_WRITE);
            SendWr rd = new SendWr(1);
            rd.opcode = WrOpcode.RDMA_READ;
            rd.signaled = true;
            rd.addSge(buf.iova(), 4104, buf.lkey());
            rd.remoteAddr = 0;
            rd.rkey = key;
            probe.qp().postSend(rd);
            WorkCompletion[] w = {new WorkCompletion()};
            while (cq.poll(w) == 0) {
                cq.await(TimeUnit.MILLISECONDS.toNanos(100));
            }
            return w[0].status;
        } finally {
            probe.close();
            l.close();
        }
    }
}
