package io.pistore.transport.rdma.internal;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;

/**
 * A verbs device over another that can refuse the WR after a REG_MR_INTEGRITY once, after posting
 * the registration (as {@code ib_post_send} does when a later WR of a chain does not fit), and
 * remembers what the host posted: its PD, the refused registration's key, whether the WR after each
 * registration was fenced.
 */
final class FaultyDevice implements VerbsDevice {
    final VerbsDevice inner;
    volatile boolean refuseAfterNextRegistration;
    volatile int refusedRegistrationKey;
    volatile ProtectionDomain connectedPd;
    volatile int registrations;
    volatile int fencedAfterRegistration;

    FaultyDevice(VerbsDevice inner) {
        this.inner = inner;
    }

    @Override
    public DeviceCaps caps() {
        return inner.caps();
    }

    @Override
    public ProtectionDomain allocPd() throws VerbsException {
        return inner.allocPd();
    }

    @Override
    public CompletionQueue createCq(int entries) throws VerbsException {
        return inner.createCq(entries);
    }

    @Override
    public Listener listen(String address, ConnectHandler handler) throws VerbsException {
        return inner.listen(address, handler);
    }

    @Override
    public RcConnection connect(String address, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              QpConfig config, ByteBuffer privateData, long timeoutMillis) throws VerbsException {
        connectedPd = pd;
        RcConnection c = inner.connect(address, pd, sendCq, recvCq, config, privateData, timeoutMillis);
        QueuePair qp = new QueuePair() {
            @Override
            public int qpNum() {
                return c.qp().qpNum();
            }

            @Override
            public QpState state() {
                return c.qp().state();
            }

            @Override
            public void postSend(SendWr chain) throws VerbsException {
                for (SendWr w = chain; w != null; w = w.next) {
                    if (w.opcode == WrOpcode.REG_MR_INTEGRITY) {
                        registrations++;
                        if (w.next != null && w.next.fence) {
                            fencedAfterRegistration++;
                        }
                        if (refuseAfterNextRegistration) {
                            refuseAfterNextRegistration = false;
                            SendWr rest = w.next;
                            w.next = null;
                            try {
                                c.qp().postSend(chain);
                            } finally {
                                w.next = rest;
                            }
                            refusedRegistrationKey = w.key;
                            throw new VerbsException(VerbsException.ENOMEM,
                                    "send queue full (refused by the test after the registration)");
                        }
                    }
                }
                c.qp().postSend(chain);
            }

            @Override
            public void postRecv(RecvWr chain) throws VerbsException {
                c.qp().postRecv(chain);
            }
        };
        return new RcConnection() {
            @Override
            public QueuePair qp() {
                return qp;
            }

            @Override
            public ByteBuffer peerPrivateData() {
                return c.peerPrivateData();
            }

            @Override
            public String peer() {
                return c.peer();
            }

            @Override
            public Object context() {
                return c.context();
            }

            @Override
            public void close() {
                c.close();
            }
        };
    }

    @Override
    public void close() {
        inner.close();
    }
}
