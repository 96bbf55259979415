package io.pistore.transport.rdma.verbs.disni;

import io.pistore.spi.Availability;
import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code disni}: real RDMA devices through DiSNI 2.1. DiSNI exposes no integrity MR (nor fast
 * registration, local invalidate or device queries), so its devices report no
 * {@link Capability#INTEGRITY_MR} and the transport does PI in software on every format.
 *
 * <p>Status: the probe and the work-request mapping are done and tested; the device binding (CM
 * event loop with deadlines, QP/CQ creation, SVC-cached posting) is not yet written, so
 * {@link #open} refuses with a clear message. See docs/RDMA.md.
 */
public final class DisniVerbsProvider implements VerbsProvider {
    public static final String NAME = "disni";
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
                    if (a.isAvailable()) {
                        a = Availability.unavailable("DiSNI and an RDMA device are present, but pistore's DiSNI device"
                                + " binding is not implemented yet (docs/RDMA.md)");
                    }
                    cached = a;
                }
            }
        }
        return a;
    }

    /** What a DiSNI device can do: RC send/recv and one-sided READ/WRITE, four SGEs (fixed in libdisni). */
    public static DeviceCaps caps(int maxQpWr) {
        return new DeviceCaps(EnumSet.of(Capability.RDMA_READ, Capability.RDMA_WRITE), maxQpWr, 4, 65536, 0,
                Set.of(), EnumSet.noneOf(DifGuard.class), Set.of());
    }

    @Override
    public VerbsDevice open(String localAddress) throws VerbsException {
        Availability a = probe();
        if (!a.isAvailable()) {
            throw new VerbsException(VerbsException.ENODEV, "disni: " + a.cause());
        }
        throw new VerbsException(VerbsException.EOPNOTSUPP, "disni: the device binding (RDMA CM, QP, CQ over DiSNI)"
                + " is not implemented yet; use rdma.provider=soft");
    }
}
