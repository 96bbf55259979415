package io.pistore.transport.rdma.verbs.soft;

import io.pistore.spi.Availability;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.util.List;

/**
 * {@code soft}: an in-process software NIC with an emulated signature engine, always available.
 * {@code rdma.soft.integrity=false} makes its devices report no integrity MR (to run the
 * software-PI path as on DiSNI hardware).
 */
public final class SoftVerbsProvider implements VerbsProvider {
    public static final String NAME = "soft";
    public static final TransportOption<Boolean> INTEGRITY = TransportOption.flag("rdma.soft.integrity", true,
            "the soft NIC offers integrity MRs with a signature engine (false: software PI, as on DiSNI devices)");

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability probe() {
        return Availability.available();
    }

    @Override
    public List<TransportOption<?>> options() {
        return List.of(INTEGRITY);
    }

    @Override
    public DeviceCaps caps(TransportOptions options) {
        return SoftDevice.capsOf(options.get(INTEGRITY));
    }

    @Override
    public VerbsDevice open(TransportOptions options) {
        return new SoftDevice(options.get(INTEGRITY));
    }
}
