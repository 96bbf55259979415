package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A DiSNI device: the verbs context of the local address it was opened on, one RDMA CM event channel
 * with its event thread ({@link CmEventPump}), and the checks of what may be made on it. RcConnection
 * management is the {@link ActiveConnector}'s ({@link #connect}) and the {@link DisniListener}'s
 * ({@link #listen}).
 */
final class DisniDevice implements VerbsDevice {
    private final DisniOps ops;
    private final DisniOps.Channel channel;
    private final DisniOps.Id deviceId;
    private final DisniOps.Ctx ctx;
    private final DeviceCaps caps;
    private final String localAddress;
    private final CmEventPump events;
    private final ActiveConnector connector;

    /**
     * Opens the device serving {@code localAddress} (an IP, or null: the first local address whose
     * RDMA CM bind yields a device, among {@code candidates}).
     */
    DisniDevice(DisniOps ops, String localAddress, List<InetAddress> candidates, DeviceCaps caps)
            throws VerbsException {
        this.ops = ops;
        this.caps = caps;
        DisniOps.Channel ch;
        try {
            ch = ops.createEventChannel();
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENODEV, "disni: rdma_create_event_channel failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
        this.channel = ch;
        DisniOps.Id found = null;
        DisniOps.Ctx foundCtx = null;
        String foundAddr = null;
        List<InetAddress> tries = new ArrayList<>();
        boolean ipv6 = false;
        try {
            if (localAddress != null) {
                InetAddress a = InetAddress.getByName(localAddress);
                if (!(a instanceof Inet4Address)) {
                    ipv6 = true;
                } else {
                    tries.add(a);
                }
            } else {
                for (InetAddress a : candidates) {
                    if (a instanceof Inet4Address) { // DiSNI 2.1 builds IPv4 sockaddrs only
                        tries.add(a);
                    }
                }
            }
            for (InetAddress a : tries) {
                DisniOps.Id id = ops.createId(channel);
                try {
                    ops.bindAddr(id, new InetSocketAddress(a, 0));
                    DisniOps.Ctx c = ops.context(id);
                    if (c != null) {
                        found = id;
                        foundCtx = c;
                        foundAddr = a.getHostAddress();
                        break;
                    }
                } catch (IOException e) {
                    // not an RDMA address; try the next
                }
                ops.destroyId(id);
            }
        } catch (IOException e) {
            ops.destroyEventChannel(channel);
            throw new VerbsException(VerbsException.ENODEV, "disni: " + DisniProbe.firstLine(String.valueOf(
                    e.getMessage())));
        }
        if (ipv6) {
            ops.destroyEventChannel(channel);
            throw new VerbsException(VerbsException.EINVAL, "disni: rdma.disni.local=" + localAddress
                    + " is an IPv6 address; DiSNI 2.1 supports IPv4 only");
        }
        if (found == null) {
            ops.destroyEventChannel(channel);
            throw new VerbsException(VerbsException.ENODEV, localAddress != null
                    ? "disni: " + localAddress + " is not the address of an RDMA device"
                    : "disni: no local address is bound to an RDMA device (tried " + tries.size()
                    + "); set rdma.disni.local=<ip of the RDMA interface>");
        }
        this.deviceId = found;
        this.ctx = foundCtx;
        this.localAddress = foundAddr;
        this.events = new CmEventPump(ops, channel);
        this.connector = new ActiveConnector(this);
        this.events.start();
    }

    /** The local address whose device this is. */
    String localAddress() {
        return localAddress;
    }

    DisniOps ops() {
        return ops;
    }

    DisniOps.Channel channel() {
        return channel;
    }

    DisniOps.Ctx ctx() {
        return ctx;
    }

    CmEventPump events() {
        return events;
    }

    @Override
    public DeviceCaps caps() {
        return caps;
    }

    @Override
    public ProtectionDomain allocPd() throws VerbsException {
        try {
            return new DisniPd(ops, ops.allocPd(ctx));
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, "disni: ibv_alloc_pd failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
    }

    @Override
    public CompletionQueue createCq(int entries) throws VerbsException {
        if (entries < 1 || entries > caps.maxCqe()) {
            throw new VerbsException(VerbsException.EINVAL, "disni: CQ of " + entries + " entries (1 to "
                    + caps.maxCqe() + ")");
        }
        try {
            return new DisniCq(ops, ops.createCq(ctx, entries));
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, "disni: ibv_create_cq failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
    }

    @Override
    public RcConnection connect(String address, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              QpConfig config, ByteBuffer privateData, long timeoutMillis) throws VerbsException {
        return connector.connect(address, pd, sendCq, recvCq, config, privateData, timeoutMillis);
    }

    @Override
    public Listener listen(String address, ConnectHandler handler) throws VerbsException {
        return DisniListener.open(this, address, handler);
    }

    /** Whether this device can make a QP of {@code c}: its work request limit, libdisni's SGEs, no integrity. */
    void checkQp(QpConfig c) throws VerbsException {
        if (c.maxSendWr() > caps.maxQpWr() || c.maxRecvWr() > caps.maxQpWr()) {
            throw new VerbsException(VerbsException.EINVAL, "disni: QP of " + c.maxSendWr() + "/" + c.maxRecvWr()
                    + " work requests; this device allows " + caps.maxQpWr() + " (rdma.disni.maxQpWr)");
        }
        if (c.maxSendSge() > DisniVerbsProvider.MAX_SGE || c.maxRecvSge() > DisniVerbsProvider.MAX_SGE) {
            throw new VerbsException(VerbsException.EINVAL, "disni: QP with " + c.maxSendSge() + "/" + c.maxRecvSge()
                    + " SGEs; libdisni creates QPs with " + DisniVerbsProvider.MAX_SGE);
        }
        if (c.integrity()) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "disni: no integrity QPs (IB_QP_CREATE_INTEGRITY_EN)");
        }
    }

    static DisniPd disniPd(ProtectionDomain pd) throws VerbsException {
        if (!(pd instanceof DisniPd)) {
            throw new VerbsException(VerbsException.EINVAL, "disni: the PD is not a disni PD: " + pd);
        }
        return (DisniPd) pd;
    }

    static DisniCq disniCq(CompletionQueue cq) throws VerbsException {
        if (!(cq instanceof DisniCq)) {
            throw new VerbsException(VerbsException.EINVAL, "disni: the CQ is not a disni CQ: " + cq);
        }
        return (DisniCq) cq;
    }

    /** Destroys a connection that did not establish: its QP (when made) and its id. */
    void abandon(DisniOps.Id id, DisniQp qp, boolean qpMade) {
        if (qp != null) {
            qp.close();
        }
        if (qpMade) {
            ops.destroyQp(id);
        }
        ops.destroyId(id);
    }

    /** An established connection's end: {@code rdma_disconnect}, then its QP and id are destroyed. */
    void closeConnection(DisniConnection c) {
        events.removeConnection(c.id);
        ops.disconnect(c.id);
        ops.destroyQp(c.id);
        ops.destroyId(c.id);
    }

    @Override
    public void close() {
        if (events.stopped()) {
            return;
        }
        for (DisniListener l : events.listeners()) {
            l.close();
        }
        for (DisniConnection c : events.connections()) {
            c.close();
        }
        events.stop();
        ops.destroyId(deviceId);
        ops.destroyEventChannel(channel);
    }
}
