package io.pistore.transport.rdma.verbs.disni;

import io.pistore.spi.Availability;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code disni}: real RDMA devices through DiSNI 2.1. DiSNI exposes no integrity MR (nor fast
 * registration, local invalidate or device queries), so its devices report no
 * {@link Capability#INTEGRITY_MR} and the transport does PI in software on every format.
 *
 * <p>{@link #open} opens a {@link DisniDevice} over {@link RealDisniOps}: the device of
 * {@code rdma.disni.local} (an IP) or, without it, of the first local address RDMA CM binds to a
 * device. {@code rdma.disni.maxQpWr} (default 16384) bounds QP sizes. The binding's logic is tested
 * against a fake of {@link DisniOps}; it has not run on an RDMA NIC (docs/RDMA.md).
 */
public final class DisniVerbsProvider implements VerbsProvider {
    public static final String NAME = "disni";
    public static final TransportOption<String> LOCAL = TransportOption.text("rdma.disni.local", "IP", null,
            "local address whose RDMA device to use (none: the first address RDMA CM binds to a device)");
    public static final TransportOption<Long> MAX_QP_WR = TransportOption.number("rdma.disni.maxQpWr", 16384, 1,
            1 << 20, "work requests per queue pair, at most");
    /** libdisni's {@code _createQP} fixes max_send_sge and max_recv_sge at 4. */
    public static final int MAX_SGE = 4;
    private static volatile Availability cached;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability probe() {
        Availability a = cached;
        if (a == null) {
            synchronized (DisniVerbsProvider.class) {
                a = cached;
                if (a == null) {
                    a = DisniProbe.run(DisniProbe.REAL);
                    cached = a;
                }
            }
        }
        return a;
    }

    /** What a DiSNI device can do: RC send/recv and one-sided READ/WRITE, four SGEs (fixed in libdisni). */
    public static DeviceCaps caps(int maxQpWr) {
        return new DeviceCaps(EnumSet.of(Capability.RDMA_READ, Capability.RDMA_WRITE), maxQpWr, MAX_SGE, 65536, 0,
                Set.of(), EnumSet.noneOf(DifGuard.class), Set.of());
    }

    @Override
    public List<TransportOption<?>> options() {
        return List.of(LOCAL, MAX_QP_WR);
    }

    @Override
    public DeviceCaps caps(TransportOptions options) {
        return caps(options.get(MAX_QP_WR).intValue());
    }

    @Override
    public VerbsDevice open(TransportOptions options) throws VerbsException {
        Availability a = probe();
        if (!a.isAvailable()) {
            throw new VerbsException(VerbsException.ENODEV, "disni: " + a.cause());
        }
        String local;
        int maxQpWr;
        try {
            local = options.get(LOCAL);
            maxQpWr = options.get(MAX_QP_WR).intValue();
        } catch (IllegalArgumentException e) {
            throw new VerbsException(VerbsException.EINVAL, "disni: " + e.getMessage());
        }
        return new DisniDevice(new RealDisniOps(), local, local == null ? candidates() : List.of(), caps(maxQpWr));
    }

    /** Local unicast addresses of interfaces that are up, loopback last (soft RoCE on lo is possible). */
    static List<InetAddress> candidates() {
        List<InetAddress> l = new ArrayList<>();
        List<InetAddress> loop = new ArrayList<>();
        try {
            for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!n.isUp()) {
                    continue;
                }
                for (InetAddress a : Collections.list(n.getInetAddresses())) {
                    if (a.isLinkLocalAddress() || a.isMulticastAddress()) {
                        continue;
                    }
                    (a.isLoopbackAddress() ? loop : l).add(a);
                }
            }
        } catch (SocketException e) {
            // no interfaces: nothing to try
        }
        l.addAll(loop);
        return l;
    }
}
