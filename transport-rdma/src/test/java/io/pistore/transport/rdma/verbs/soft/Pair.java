package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.Connection;
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

/** Two connected QPs on one soft device: "host" (active) and "target" (passive), each with its PD and CQ. */
final class Pair implements AutoCloseable {
    final SoftDevice dev;
    final ProtectionDomain hostPd;
    final ProtectionDomain targetPd;
    final CompletionQueue hostCq;
    final CompletionQueue targetCq;
    final Connection host;
    Connection target;
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
        dev = new SoftDevice(true, localWork);
        hostPd = dev.allocPd();
        targetPd = dev.allocPd();
        hostCq = dev.createCq(1024);
        targetCq = dev.createCq(1024);
        listener = dev.listen("127.0.0.1:0", new ConnectHandler() {
            @Override
            public Accept onConnectRequest(String peer, ByteBuffer pd) {
                privateDataSeen = pd;
                return new Accept(targetPd, targetCq, targetCq, targetCfg, "ctx");
            }

            @Override
            public void onEstablished(Connection c) {
                target = c;
            }

            @Override
            public synchronized void onDisconnected(Connection c) {
                disconnects.add(c.peer());
            }
        });
        host = dev.connect(listener.address(), hostPd, hostCq, hostCq, hostCfg,
                ByteBuffer.wrap(new byte[] {1, 2, 3}), 1000);
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

    @Override
    public void close() {
        host.close();
        if (target != null) target.close();
        listener.close();
    }
}
