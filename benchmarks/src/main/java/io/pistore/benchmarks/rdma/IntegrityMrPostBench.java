package io.pistore.benchmarks.rdma;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Protection;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.IntegrityMrPool;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Host-side cost per request of the integrity MR path, on the soft NIC (one thread, no target
 * logic): {@code prepare} = take an MR from the pool + map data and metadata + set the signature
 * attributes + build the REG_MR_INTEGRITY and SEND work requests (then the status check and return
 * to the pool that end every use); {@code prepareAndPost} adds posting the chain, which the soft
 * NIC executes on the posting thread (validate and apply the registration, copy the 64-byte capsule
 * into the peer's receive), polling the SEND completion, the peer's receive repost, and the signalled
 * LOCAL_INV whose completion ends a request on the host. Run with {@code -prof gc} to see the
 * allocation rate.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class IntegrityMrPostBench {
    @Param({"4096+8"})
    public String format;

    @Param({"1", "8"})
    public int blocks;

    private BlockFormat f;
    private IntegrityMrPool pool;
    private ScatterList data;
    private ScatterList meta;
    private Protection prot;
    private final SendWr reg = new SendWr(1);
    private final SendWr send = new SendWr(1);
    private final SendWr inv = new SendWr(1);
    private final MrStatus st = new MrStatus();
    private final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};
    private RcConnection host;
    private RcConnection target;
    private CompletionQueue hostCq;
    private CompletionQueue targetCq;
    private MemoryRegion cmd;
    private ByteBuffer cmdBuf;
    private RecvWr recv;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        f = BlockFormat.parse(format);
        SoftDevice dev = new SoftDevice(true);
        ProtectionDomain hpd = dev.allocPd();
        ProtectionDomain tpd = dev.allocPd();
        hostCq = dev.createCq(1024);
        targetCq = dev.createCq(1024);
        var l = dev.listen("bench-" + System.nanoTime() + ":1", new ConnectHandler() {
            @Override
            public Accept onConnectRequest(String peer, ByteBuffer pd) {
                return new Accept(tpd, targetCq, targetCq, new QpConfig(16, 16, 1, 1, 7, false), null);
            }

            @Override
            public void onEstablished(RcConnection c) {
                target = c;
            }

            @Override
            public void onDisconnected(RcConnection c) {
            }
        });
        host = dev.connect(l.address(), hpd, hostCq, hostCq, new QpConfig(128, 4, 1, 1, 7, true), null, 1000);
        pool = new IntegrityMrPool(hpd, 32, 16, 16);
        data = ScatterList.of(ByteBuffer.allocateDirect(blocks * f.dataSize()));
        meta = ScatterList.of(ByteBuffer.allocateDirect(blocks * f.metadataSize()));
        prot = Protection.pass(CheckFlags.ALL, 1234, 0, 0xFFFF);
        cmd = hpd.register(ByteBuffer.allocateDirect(256), Access.LOCAL_WRITE);
        cmdBuf = cmd.buffer();
        MemoryRegion rbuf = tpd.register(ByteBuffer.allocateDirect(256), Access.LOCAL_WRITE);
        recv = new RecvWr(1);
        recv.addSge(rbuf.iova(), 256, rbuf.lkey());
        target.qp().postRecv(recv);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
        target.close();
        pool.close();
    }

    private IntegrityMr prepareOne() throws Exception {
        IntegrityMr mr = pool.take();
        mr.map(data, meta, 4096);
        SignatureMapping.setHostAttrs(mr.sigAttrs(), f, true, prot, true);
        long wire = SignatureMapping.wireLength(mr.sigAttrs(), f, blocks);
        SendWr r = reg.reset();
        r.opcode = WrOpcode.REG_MR_INTEGRITY;
        r.mr = mr;
        r.key = mr.nextKey();
        r.access = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
        cmdBuf.putLong(32, mr.iova()).putInt(40, (int) wire).putInt(44, r.key);
        SendWr s = send.reset();
        s.signaled = true;
        s.fence = true; // as the host: the SEND carrying the key waits for the registration
        s.addSge(cmd.iova(), 64, cmd.lkey());
        r.next = s;
        return mr;
    }

    @Benchmark
    public int prepare() throws Exception {
        IntegrityMr mr = prepareOne();
        int key = reg.key;
        mr.checkStatus(st);
        pool.put(mr);
        return key;
    }

    @Benchmark
    public int prepareAndPost() throws Exception {
        IntegrityMr mr = prepareOne();
        host.qp().postSend(reg);
        int n = hostCq.poll(wcs);
        targetCq.poll(wcs);
        target.qp().postRecv(recv);
        mr.checkStatus(st);
        SendWr i = inv.reset();
        i.opcode = WrOpcode.LOCAL_INV;
        i.signaled = true;
        i.invalidateKey = mr.rkey();
        host.qp().postSend(i);
        n += hostCq.poll(wcs); // the request ends when its LOCAL_INV completed
        pool.put(mr);
        return n;
    }
}
