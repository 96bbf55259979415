package io.pistore.transport.rdma.verbs;

import io.pistore.spi.Availability;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A verbs implementation, found by {@link ServiceLoader}: {@code soft} (an in-process software NIC)
 * or {@code disni} (real devices through DiSNI). {@link #probe()} never throws.
 */
public interface VerbsProvider {
    String name();

    Availability probe();

    /** Opens the device that serves {@code localAddress} (RDMA-CM style; null: any). */
    VerbsDevice open(String localAddress) throws VerbsException;

    static List<VerbsProvider> all() {
        List<VerbsProvider> l = new ArrayList<>();
        for (VerbsProvider p : ServiceLoader.load(VerbsProvider.class, VerbsProvider.class.getClassLoader())) {
            l.add(p);
        }
        return l;
    }
}
