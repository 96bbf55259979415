package io.pistore.transport.tcp;

import java.util.Locale;

/**
 * Settings of the TCP transport. {@link #fromSystemProperties()} reads them from
 * {@code -Dpistore.tcp.*} (names below); tests build them directly.
 *
 * <ul>
 *   <li>{@code ioThreads} ({@code pistore.tcp.ioThreads}, default min(2, CPUs)): I/O threads per
 *       transport instance, shared by its listeners and host connections;
 *   <li>{@code spinMicros} ({@code pistore.tcp.spinMicros}, default 50): how long an I/O thread
 *       polls after its last event before blocking (0: never);
 *   <li>{@code pollMicros} ({@code pistore.tcp.pollMicros}, default 200): how long it polls after its
 *       last event while host requests are in flight on it (0: no completion polling);
 *   <li>{@code headerDigest}, {@code dataDigest} ({@code pistore.tcp.headerDigest},
 *       {@code pistore.tcp.dataDigest}, default false): CRC-32C digests a host asks for (a target
 *       grants the digests a host asks for);
 *   <li>{@code maxTransferBytes} ({@code pistore.tcp.maxTransfer}, default 8 MiB): largest payload
 *       (data plus metadata) of one request;
 *   <li>{@code requestTimeoutMillis} ({@code pistore.tcp.requestTimeoutMs}, default 30000): a host
 *       connection that waits longer than this for a response is closed and its requests fail;
 *   <li>{@code connectTimeoutMillis} ({@code pistore.tcp.connectTimeoutMs}, default 10000);
 *   <li>{@code maxQueueDepth}: the deepest queue a target grants (4096).
 * </ul>
 */
public final class TcpConfig {
    public int ioThreads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
    public long spinMicros = 50;
    public long pollMicros = 200;
    public boolean headerDigest;
    public boolean dataDigest;
    public int maxTransferBytes = 8 << 20;
    public int maxQueueDepth = 4096;
    public long requestTimeoutMillis = 30_000;
    public long connectTimeoutMillis = 10_000;

    public static TcpConfig defaults() {
        return new TcpConfig();
    }

    public static TcpConfig fromSystemProperties() {
        TcpConfig c = new TcpConfig();
        c.ioThreads = (int) longProp("ioThreads", c.ioThreads, 1, 64);
        c.spinMicros = longProp("spinMicros", c.spinMicros, 0, 1_000_000);
        c.pollMicros = longProp("pollMicros", c.pollMicros, 0, 1_000_000);
        c.headerDigest = Boolean.parseBoolean(System.getProperty("pistore.tcp.headerDigest", "false"));
        c.dataDigest = Boolean.parseBoolean(System.getProperty("pistore.tcp.dataDigest", "false"));
        c.maxTransferBytes = (int) longProp("maxTransfer", c.maxTransferBytes, 4096 + 128, 64 << 20);
        c.requestTimeoutMillis = longProp("requestTimeoutMs", c.requestTimeoutMillis, 1, Long.MAX_VALUE / 2_000_000);
        c.connectTimeoutMillis = longProp("connectTimeoutMs", c.connectTimeoutMillis, 1, Long.MAX_VALUE / 2_000_000);
        return c;
    }

    private static long longProp(String name, long def, long min, long max) {
        String v = System.getProperty("pistore.tcp." + name);
        if (v == null || v.isBlank()) {
            return def;
        }
        long x;
        try {
            x = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("pistore.tcp." + name + " must be a number, not '" + v + "'");
        }
        if (x < min || x > max) {
            throw new IllegalArgumentException("pistore.tcp." + name + " must be " + min + " to " + max + ", not " + x);
        }
        return x;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "ioThreads=%d spin=%dus poll=%dus headerDigest=%s dataDigest=%s maxTransfer=%d",
                ioThreads, spinMicros, pollMicros, headerDigest, dataDigest, maxTransferBytes);
    }
}
