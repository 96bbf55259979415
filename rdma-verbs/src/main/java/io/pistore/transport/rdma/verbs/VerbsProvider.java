package io.pistore.transport.rdma.verbs;

import io.pistore.spi.Availability;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A verbs implementation, found by {@link ServiceLoader}: {@code soft} (an in-process software NIC)
 * or {@code disni} (real devices through DiSNI). {@link #probe()} never throws. Its settings are
 * rdma transport options named {@code rdma.<name()>.<setting>}.
 */
public interface VerbsProvider {
    String name();

    Availability probe();

    /** The settings this provider reads, each named {@code rdma.<name()>.<setting>}. */
    default List<TransportOption<?>> options() {
        return List.of();
    }

    /** What a device opened with {@code options} reports, without opening one. */
    DeviceCaps caps(TransportOptions options);

    /** Opens a device with these settings (which one, where there are several, is a setting). */
    VerbsDevice open(TransportOptions options) throws VerbsException;

    /**
     * Every provider on the class path, by name: the order of their settings and messages does not
     * depend on where each one's jar lies on the class path (the soft NIC is a module of its own).
     */
    static List<VerbsProvider> all() {
        List<VerbsProvider> l = new ArrayList<>();
        for (VerbsProvider p : ServiceLoader.load(VerbsProvider.class, VerbsProvider.class.getClassLoader())) {
            l.add(p);
        }
        l.sort(java.util.Comparator.comparing(VerbsProvider::name));
        return l;
    }
}
