package io.pistore.transport.rdma.verbs.soft;

import io.pistore.spi.Availability;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.util.List;

/**
 * {@code soft}: a software NIC with an emulated signature engine, always available: in-process
 * between devices of one JVM, over a packet path between processes ({@code rdma.soft.fabric}).
 * {@code rdma.soft.integrity=false} makes its devices report no integrity MR (to run the
 * software-PI path as on DiSNI hardware); {@code rdma.soft.localWork=async} makes local work execute
 * after the post returned ({@link LocalWork}).
 */
public final class SoftVerbsProvider implements VerbsProvider {
    public static final String NAME = "soft";
    public static final TransportOption<Boolean> INTEGRITY = TransportOption.flag("rdma.soft.integrity", true,
            "the soft NIC offers integrity MRs with a signature engine (false: software PI, as on DiSNI devices)");
    public static final TransportOption<String> LOCAL_WORK = TransportOption.choice("rdma.soft.localWork", "inline",
            List.of("inline", "async"), "when the soft NIC executes REG_MR_INTEGRITY and LOCAL_INV: inline in the post,"
                    + " or async on its own thread after the post returned, as a real NIC does");

    public static final TransportOption<String> FABRIC = TransportOption.choice("rdma.soft.fabric", "auto",
            List.of("auto", "packets"), "how soft devices reach each other: auto (in-process when the listener is in this"
                    + " JVM, else packets over a socket to the listen address), or packets always");

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
        return List.of(INTEGRITY, LOCAL_WORK, FABRIC);
    }

    @Override
    public DeviceCaps caps(TransportOptions options) {
        return SoftDevice.capsOf(options.get(INTEGRITY));
    }

    @Override
    public VerbsDevice open(TransportOptions options) {
        return new SoftDevice(options.get(INTEGRITY),
                options.get(LOCAL_WORK).equals("async") ? LocalWork.ASYNC : LocalWork.INLINE,
                options.get(FABRIC).equals("packets"));
    }
}
