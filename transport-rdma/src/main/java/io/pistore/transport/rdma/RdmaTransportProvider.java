package io.pistore.transport.rdma;

import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.integrity.GuardType;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * The {@code rdma} transport: NVMe-oF-style capsules over RC queue pairs of a verbs provider, with
 * one integrity MR per request where the device can check PI (see {@link SignatureMapping}), and
 * software PI otherwise. The verbs provider is chosen by {@code rdma.provider} (see
 * {@link RdmaOptions}).
 */
public final class RdmaTransportProvider implements BlockTransportProvider {
    public static final String NAME = "rdma";

    @Override
    public String name() {
        return NAME;
    }

    /** {@code rdma.provider}, {@code rdma.pi}, the reconnect options, then each verbs provider's own options. */
    @Override
    public List<TransportOption<?>> options() {
        List<TransportOption<?>> l = new ArrayList<>(RdmaOptions.OPTIONS);
        for (VerbsProvider p : VerbsProvider.all()) {
            l.addAll(p.options());
        }
        return List.copyOf(l);
    }

    /** The verbs provider the options select, or the reason none can be used. */
    static Object select(RdmaOptions o) {
        List<VerbsProvider> all = VerbsProvider.all();
        if (o.provider().equals("auto")) {
            VerbsProvider soft = null;
            for (VerbsProvider p : all) {
                if (p.name().equals("disni") && p.probe().isAvailable()) {
                    return p;
                }
                if (p.name().equals("soft")) {
                    soft = p;
                }
            }
            return soft != null ? soft : "no verbs provider found";
        }
        for (VerbsProvider p : all) {
            if (p.name().equals(o.provider())) {
                Availability a = p.probe();
                return a.isAvailable() ? p : "verbs provider " + p.name() + ": " + a.cause();
            }
        }
        return "no verbs provider named '" + o.provider() + "' on the class path";
    }

    @Override
    public Availability availability(TransportOptions options) {
        try {
            Object s = select(RdmaOptions.from(options, options()));
            return s instanceof VerbsProvider ? Availability.available() : Availability.unavailable((String) s);
        } catch (IllegalArgumentException | LinkageError e) {
            return Availability.unavailable(e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    @Override
    public TransportCapabilities capabilities(TransportOptions options) {
        RdmaOptions o = RdmaOptions.from(options, options());
        Object s = select(o);
        EnumSet<GuardType> hw = EnumSet.noneOf(GuardType.class);
        if (s instanceof VerbsProvider && o.pi() != RdmaOptions.PiMode.CPU) {
            DeviceCaps caps = ((VerbsProvider) s).caps(options);
            if (caps.has(Capability.INTEGRITY_MR)) {
                for (DifGuard g : caps.sigGuards()) {
                    hw.add(SignatureMapping.guardType(g));
                }
            }
        }
        return new TransportCapabilities(hw, TransportCapabilities.MAX_TRANSFER_BYTES);
    }

    /** A host connects to the first peer of a list that answers and fails over to the next when it is lost. */
    @Override
    public boolean takesPeerLists() {
        return true;
    }

    @Override
    public BlockTransport create(TransportOptions options) {
        RdmaOptions o = RdmaOptions.from(options, options());
        Object s = select(o);
        if (!(s instanceof VerbsProvider)) {
            throw new IllegalStateException((String) s);
        }
        return new RdmaTransport((VerbsProvider) s, o);
    }
}
