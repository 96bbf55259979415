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

    /** As tcp's: the largest millisecond count whose nanoseconds still fit a long with room to add. */
    private static final long MAX_MS = Long.MAX_VALUE / 2_000_000;

    public static final TransportOption<Long> REQUEST_TIMEOUT_MS = TransportOption.number("rdma.requestTimeoutMs",
            30_000, 1, MAX_MS, "a host queue that waits longer for a response closes its connection: its requests fail"
                    + " and it reconnects (checked about every 100 ms)");
    public static final TransportOption<Boolean> RECONNECT = TransportOption.flag("rdma.reconnect", true,
            "a host queue whose connection is lost reconnects in the background, to the next peer of a "
                    + "target list HOST:PORT,HOST:PORT,... (its requests fail meanwhile)");
    public static final TransportOption<Long> RECONNECT_DELAY_MS = TransportOption.number("rdma.reconnectDelayMs",
            100, 1, 3_600_000, "first reconnect delay; it doubles after each failed try");
    public static final TransportOption<Long> RECONNECT_MAX_DELAY_MS = TransportOption.number(
            "rdma.reconnectMaxDelayMs", 5_000, 1, 3_600_000, "longest reconnect delay");

    public static final TransportOption<Boolean> PATH_STATES = TransportOption.flag("rdma.pathStates", true,
            "path states: a target answers them; a host given a target list HOST:PORT,HOST:PORT,... watches every"
                    + " peer's and sends I/O to the peer optimized for its volumes (a replicated volume's leader)");

    /** The options of this class, in the order {@code pistore transports} lists them. */
    static final List<TransportOption<?>> OPTIONS = List.of(PROVIDER, PI, REQUEST_TIMEOUT_MS, RECONNECT,
            RECONNECT_DELAY_MS, RECONNECT_MAX_DELAY_MS, PATH_STATES);

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
     * How long a host queue waits for the response to a request before it treats its connection as
     * lost ({@code rdma.requestTimeoutMs}): a target whose NIC still acknowledges but whose process
     * never answers would otherwise keep the requests, and the queue, waiting for good.
     */
    public long requestTimeoutMillis() {
        return all.get(REQUEST_TIMEOUT_MS);
    }

    /** Whether a host queue reconnects after its connection was lost ({@code rdma.reconnect}). */
    public boolean reconnect() {
        return all.get(RECONNECT);
    }

    /** The first reconnect delay; it doubles after each failed attempt up to {@link #reconnectMaxDelayMillis}. */
    public long reconnectDelayMillis() {
        return all.get(RECONNECT_DELAY_MS);
    }

    public long reconnectMaxDelayMillis() {
        return all.get(RECONNECT_MAX_DELAY_MS);
    }

    /**
     * Whether path states are on ({@code rdma.pathStates}): a target answers PATH_STATES, and a host
     * given a list of peers watches them and follows the optimized path.
     */
    public boolean pathStates() {
        return all.get(PATH_STATES);
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

    /** The rdma settings of {@code options} (programs and tests that build a host connection themselves). */
    public static RdmaOptions of(TransportOptions options) {
        return from(options, new RdmaTransportProvider().options());
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
