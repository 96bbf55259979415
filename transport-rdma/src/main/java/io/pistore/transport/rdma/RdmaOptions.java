package io.pistore.transport.rdma;

import java.util.Locale;

/**
 * Configuration of the rdma transport, from system properties:
 * <ul>
 *   <li>{@code rdma.provider} = {@code soft | disni | auto} (default auto: disni when it is
 *       available, else soft);
 *   <li>{@code rdma.pi} = {@code auto | offload | cpu} (default auto: the NIC's signature engine for
 *       formats it can carry, software PI for the others; cpu forces software PI everywhere).
 * </ul>
 */
public final class RdmaOptions {
    public static final String PROVIDER_PROPERTY = "rdma.provider";
    public static final String PI_PROPERTY = "rdma.pi";

    public enum PiMode { AUTO, OFFLOAD, CPU }

    private final String provider;
    private final PiMode pi;

    public RdmaOptions(String provider, PiMode pi) {
        String p = provider == null ? "auto" : provider.trim().toLowerCase(Locale.ROOT);
        if (!p.equals("auto") && !p.equals("soft") && !p.equals("disni")) {
            throw new IllegalArgumentException("rdma provider must be soft, disni or auto, not '" + provider + "'");
        }
        this.provider = p;
        this.pi = pi;
    }

    public static RdmaOptions fromSystemProperties() {
        String pi = System.getProperty(PI_PROPERTY, "auto").trim().toUpperCase(Locale.ROOT);
        PiMode mode;
        try {
            mode = PiMode.valueOf(pi);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rdma.pi must be auto, offload or cpu, not '" + pi.toLowerCase(Locale.ROOT) + "'");
        }
        return new RdmaOptions(System.getProperty(PROVIDER_PROPERTY, "auto"), mode);
    }

    /** soft, disni or auto. */
    public String provider() {
        return provider;
    }

    public PiMode pi() {
        return pi;
    }
}
