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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Two connected QPs on two soft devices that reach each other only over the packet path (as two
 * processes do): "host" (active) and "target" (passive), each with its PD and CQ.
 */
final class PacketPair implements AutoCloseable {
    final SoftDevice hostDev = new SoftDevice(true, LocalWork.INLINE, true);
    final SoftDevice targetDev = new SoftDevice(true, LocalWork.INLINE, true);
    final ProtectionDomain hostPd = hostDev.allocPd();
    final ProtectionDomain targetPd = targetDev.allocPd();
    final CompletionQueue hostCq;
    final CompletionQueue targetCq;
    final RcConnection host;
    volatile RcConnection target;
    final Listener listener;
    final List<String> disconnects = new ArrayList<>();
    final CountDownLatch established = new CountDownLatch(1);
    volatile ByteBuffer privateDataSeen;

    PacketPair(QpConfig hostCfg, QpConfig targetCfg) throws Exception {
        hostCq = hostDev.createCq(1024);
        targetCq = targetDev.createCq(1024);
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
        host = hostDev.connect(listener.address(), hostPd, hostCq, hostCq, hostCfg,
                ByteBuffer.wrap(new byte[] {1, 2, 3}), 5000);
        if (!established.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the passive side did not establish");
        }
    }

    PacketPair() throws Exception {
        this(Pair.cfg(), Pair.cfg());
    }

    QueuePair hq() {
        return host.qp();
    }

    QueuePair tq() {
        return target.qp();
    }

    /** Waits up to 10 s until {@code n} completions arrived; returns those that did. */
    static List<WorkCompletion> await(CompletionQueue cq, int n) throws InterruptedException {
        List<WorkCompletion> out = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (out.size() < n && System.nanoTime() < end) {
            cq.await(TimeUnit.MILLISECONDS.toNanos(50));
            out.addAll(Pair.drain(cq));
        }
        return out;
    }

    @Override
    public void close() {
        host.close();
        if (target != null) {
            target.close();
        }
        listener.close();
    }

    static void check(boolean ok, String what) throws VerbsException {
        if (!ok) {
            throw new VerbsException(VerbsException.EINVAL, what);
        }
    }
}
