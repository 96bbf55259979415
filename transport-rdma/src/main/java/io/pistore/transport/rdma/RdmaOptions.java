package io.pistore.transport.rdma;

import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.util.List;
import java.util.Locale;

/**
 * Settings of the rdma transport: {@code rdma.provider} and {@code rdma.pi} here, and the options
 * of the verbs providers ({@code rdma.soft.*}, {@code rdma.disni.*}), which are passed on to the
 * one selected.
 */
public final class RdmaOptions {
    public static final TransportOption<String> PROVIDER = TransportOption.choice("rdma.provider", "auto",
            List.of("auto", "soft", "disni"), "verbs provider (auto: disni when it is usable, else the soft NIC)");
    public static final TransportOption<String> PI = TransportOption.choice("rdma.pi", "auto",
            List.of("auto", "offload", "cpu"), "where PI is checked: auto (the NIC's signature engine for formats it"
                    + " can carry, software for the others), offload (refuse the others), cpu (software everywhere)");

    public enum PiMode { AUTO, OFFLOAD, CPU }

    private final String provider;
    private final PiMode pi;
    private final TransportOptions all;

    public RdmaOptions(String provider, PiMode pi) {
        this(PROVIDER.parse(provider == null ? "auto" : provider), pi, TransportOptions.NONE);
    }

    private RdmaOptions(String provider, PiMode pi, TransportOptions all) {
        this.provider = provider;
        this.pi = pi;
        this.all = all;
    }

    /**
     * The rdma settings of {@code options}; {@code declared} is every rdma option, the verbs
     * providers' included (see {@link RdmaTransportProvider#options()}).
     *
     * @throws IllegalArgumentException for an unknown {@code rdma.*} name or a bad value
     */
    static RdmaOptions from(TransportOptions options, List<TransportOption<?>> declared) {
        options.check(RdmaTransportProvider.NAME, declared);
        PiMode mode = PiMode.valueOf(options.get(PI).toUpperCase(Locale.ROOT));
        return new RdmaOptions(options.get(PROVIDER), mode, options);
    }

    /** soft, disni or auto. */
    public String provider() {
        return provider;
    }

    public PiMode pi() {
        return pi;
    }

    /** Every setting given, for the verbs provider to read its own. */
    public TransportOptions all() {
        return all;
    }
}
