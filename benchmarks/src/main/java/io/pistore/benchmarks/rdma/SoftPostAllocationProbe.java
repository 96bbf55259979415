package io.pistore.benchmarks.rdma;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Protection;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.IntegrityMrPool;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import io.pistore.transport.rdma.verbs.soft.LocalWork;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Bytes the posting thread allocates per request of the host's cycle on the soft NIC (take an
 * integrity MR, map, set the signature attributes, post REG_MR_INTEGRITY then a fenced SEND, poll,
 * repost the peer's receive, check the status, a signalled LOCAL_INV, poll it, put the MR back),
 * counted with the thread's allocated-bytes counter (which also counts what the interpreter and C1
 * allocate): on one device, and over the packet path (two devices meeting over a socket, as two
 * processes do). Three rounds each, the fewest bytes of the last two count (the first warms up; a
 * one-off lands in one round only). Exits 1 when a path allocates a byte per request or more. Not
 * a test (an allocation threshold depends on the JVM); run with
 * {@code java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" io.pistore.benchmarks.rdma.SoftPostAllocationProbe [REQUESTS]}.
 */
public final class SoftPostAllocationProbe {
    private SoftPostAllocationProbe() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        boolean ok = true;
        for (boolean packets : new boolean[] {false, true}) {
            long bytes = cycle(packets, n);
            System.out.printf(Locale.ROOT, "%s: %d bytes allocated by %d request cycles (%.3f per request)%n",
                    packets ? "packet path" : "one device", bytes, n, (double) bytes / n);
            ok &= bytes < n;
        }
        System.exit(ok ? 0 : 1);
    }

    private static long cycle(boolean packets, int n) throws Exception {
        BlockFormat f = BlockFormat.parse("4096+8");
        SoftDevice dev = new SoftDevice(true, LocalWork.INLINE, packets);
        SoftDevice targetDev = packets ? new SoftDevice(true, LocalWork.INLINE, true) : dev;
        ProtectionDomain hpd = dev.allocPd();
        ProtectionDomain tpd = targetDev.allocPd();
        CompletionQueue hostCq = dev.createCq(1024);
        CompletionQueue targetCq = targetDev.createCq(1024);
        QpConfig cfg = new QpConfig(64, 64, 4, 4, 7, true);
        RcConnection[] target = new RcConnection[1];
        CountDownLatch established = new CountDownLatch(1);
        var listener = targetDev.listen("127.0.0.1:0", new ConnectHandler() {
            @Override
            public Accept onConnectRequest(String peer, ByteBuffer pd) {
                return new Accept(tpd, targetCq, targetCq, cfg, null);
            }

            @Override
            public void onEstablished(RcConnection c) {
                target[0] = c;
                established.countDown();
            }

            @Override
            public void onDisconnected(RcConnection c) {
            }
        });
        RcConnection host = dev.connect(listener.address(), hpd, hostCq, hostCq, cfg, null, 5000);
        if (!established.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the passive side did not establish");
        }
        IntegrityMrPool pool = new IntegrityMrPool(hpd, 4, 4, 4);
        ScatterList data = ScatterList.of(ByteBuffer.allocateDirect(f.dataSize()));
        ScatterList meta = ScatterList.of(ByteBuffer.allocateDirect(f.metadataSize()));
        Protection prot = Protection.pass(CheckFlags.ALL, 1234, 0, 0xFFFF);
        MemoryRegion cmd = hpd.register(ByteBuffer.allocateDirect(256), Access.LOCAL_WRITE);
        MemoryRegion rbuf = tpd.register(ByteBuffer.allocateDirect(256), Access.LOCAL_WRITE);
        RecvWr recv = new RecvWr(1);
        recv.addSge(rbuf.iova(), 256, rbuf.lkey());
        target[0].qp().postRecv(recv);
        SendWr reg = new SendWr(1);
        SendWr send = new SendWr(1);
        SendWr inv = new SendWr(1);
        MrStatus st = new MrStatus();
        WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long allocated = Long.MAX_VALUE;
        for (int round = 0; round < 3; round++) {
            long before = t.getThreadAllocatedBytes(id);
            for (int i = 0; i < n; i++) {
                IntegrityMr mr = pool.take();
                mr.map(data, meta, 4096);
                SignatureMapping.setHostAttrs(mr.sigAttrs(), f, true, prot, true);
                SendWr r = reg.reset();
                r.opcode = WrOpcode.REG_MR_INTEGRITY;
                r.mr = mr;
                r.key = mr.nextKey();
                r.access = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
                SendWr s = send.reset();
                s.signaled = true;
                s.fence = true;
                s.addSge(cmd.iova(), 64, cmd.lkey());
                r.next = s;
                host.qp().postSend(r);
                if (pollOne(hostCq, wcs) != 1 || wcs[0].status != WcStatus.SUCCESS) {
                    throw new IllegalStateException("send did not complete: " + wcs[0]);
                }
                pollOne(targetCq, wcs);
                target[0].qp().postRecv(recv);
                mr.checkStatus(st);
                SendWr v = inv.reset();
                v.opcode = WrOpcode.LOCAL_INV;
                v.signaled = true;
                v.invalidateKey = mr.rkey();
                host.qp().postSend(v);
                if (pollOne(hostCq, wcs) != 1 || wcs[0].status != WcStatus.SUCCESS) {
                    throw new IllegalStateException("LOCAL_INV did not complete: " + wcs[0]);
                }
                pool.put(mr);
            }
            if (round > 0) {
                allocated = Math.min(allocated, t.getThreadAllocatedBytes(id) - before);
            }
        }
        pool.close();
        host.close();
        target[0].close();
        listener.close();
        return allocated;
    }

    /** The one completion expected, waiting on the CQ (up to 10 s): the packet path completes on its reader thread. */
    private static int pollOne(CompletionQueue cq, WorkCompletion[] wcs) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        int got;
        while ((got = cq.poll(wcs)) == 0 && System.nanoTime() < end) {
            cq.await(1_000_000L);
        }
        return got;
    }
}
