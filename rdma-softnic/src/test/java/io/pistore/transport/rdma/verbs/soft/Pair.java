package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two connected QPs: "host" (active) and "target" (passive), each with its PD and CQ; on one soft
 * device (the in-process fabric), or, while {@link #overPackets} is set, on two devices that reach
 * each other only over the packet path (what two processes do).
 */
final class Pair implements AutoCloseable {
    /** Set by tests that run the same rules over the packet path. */
    static volatile boolean overPackets;

    final SoftDevice dev;
    final SoftDevice targetDev;
    final ProtectionDomain hostPd;
    final ProtectionDomain targetPd;
    final CompletionQueue hostCq;
    final CompletionQueue targetCq;
    final RcConnection host;
    volatile RcConnection target;
    final Listener listener;
    final List<String> disconnects = new ArrayList<>();
    ByteBuffer privateDataSeen;

    Pair(QpConfig hostCfg, QpConfig targetCfg) throws VerbsException {
        this(hostCfg, targetCfg, LocalWork.INLINE);
    }

    Pair(LocalWork localWork) throws VerbsException {
        this(cfg(), cfg(), localWork);
    }

    Pair(QpConfig hostCfg, QpConfig targetCfg, LocalWork localWork) throws VerbsException {
        boolean packets = overPackets;
        dev = new SoftDevice(true, localWork, packets);
        targetDev = packets ? new SoftDevice(true, localWork, true) : dev;
        hostPd = dev.allocPd();
        targetPd = targetDev.allocPd();
        hostCq = dev.createCq(1024);
        targetCq = targetDev.createCq(1024);
        java.util.concurrent.CountDownLatch established = new java.util.concurrent.CountDownLatch(1);
        listener = targetDev.listen("127.0.0.1:0", new ConnectHandler() {
            @Override
            public Accept onConnectRequest(String peer, ByteBuffer pd) {
                privateDataSeen = pd;
                return new Accept(targetPd, targetCq, targetCq, targetCfg, "ctx");
            }

            @Override
            public void onEstablished(RcConnection c) {
                target = c;
                established.countDown();
            }

            @Override
            public void onDisconnected(RcConnection c) {
                synchronized (disconnects) {
                    disconnects.add(c.peer());
                }
            }
        });
        host = dev.connect(listener.address(), hostPd, hostCq, hostCq, hostCfg,
                ByteBuffer.wrap(new byte[] {1, 2, 3}), 5000);
        try {
            if (!established.await(10, TimeUnit.SECONDS)) {
                throw new VerbsException(VerbsException.ETIMEDOUT, "the passive side did not establish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException(VerbsException.ETIMEDOUT, "interrupted");
        }
    }

    Pair() throws VerbsException {
        this(cfg(), cfg());
    }

    static QpConfig cfg() {
        return new QpConfig(64, 64, 4, 4, 7, true);
    }

    QueuePair hq() {
        return host.qp();
    }

    QueuePair tq() {
        return target.qp();
    }

    static List<WorkCompletion> drain(CompletionQueue cq) {
        List<WorkCompletion> out = new ArrayList<>();
        WorkCompletion[] w = new WorkCompletion[16];
        for (int i = 0; i < w.length; i++) {
            w[i] = new WorkCompletion();
        }
        int n;
        while ((n = cq.poll(w)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion c = new WorkCompletion();
                c.wrId = w[i].wrId;
                c.status = w[i].status;
                c.opcode = w[i].opcode;
                c.byteLen = w[i].byteLen;
                c.qpNum = w[i].qpNum;
                out.add(c);
            }
        }
        return out;
    }

    /** Waits up to a second for at least one completion and returns all that are there. */
    static List<WorkCompletion> await(CompletionQueue cq) throws InterruptedException {
        cq.await(TimeUnit.SECONDS.toNanos(1));
        return drain(cq);
    }

    /** How many disconnects the passive side has heard of. */
    int disconnectsHeard() {
        synchronized (disconnects) {
            return disconnects.size();
        }
    }

    @Override
    public void close() {
        host.close();
        if (target != null) target.close();
        listener.close();
    }
}
