package io.pistore.transport.rdma.verbs.soft;

import io.pistore.spi.Availability;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsProvider;

/**
 * {@code soft}: an in-process software NIC with an emulated signature engine, always available.
 * System property {@code pistore.rdma.soft.integrity=false} makes its devices report no integrity MR
 * (to run the software-PI path as on DiSNI hardware).
 */
public final class SoftVerbsProvider implements VerbsProvider {
    public static final String NAME = "soft";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability probe() {
        return Availability.available();
    }

    @Override
    public VerbsDevice open(String localAddress) {
        return new SoftDevice(!"false".equals(System.getProperty("pistore.rdma.soft.integrity")));
    }
}
