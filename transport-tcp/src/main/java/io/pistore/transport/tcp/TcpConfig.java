package io.pistore.transport.tcp;

import io.pistore.spi.TransportCapabilities;
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
 *   <li>{@code frameTimeoutMillis} ({@code pistore.tcp.frameTimeoutMs}, default 30000): a
 *       connection whose peer stops sending in the middle of a frame is closed after this long
 *       without a byte (checked once a second); a target also closes a connection that has not
 *       said HELLO within {@code connectTimeoutMillis};
 *   <li>{@code reconnect} ({@code pistore.tcp.reconnect}, default true): a host queue whose
 *       connection is lost reconnects in the background (requests fail with a transport error
 *       meanwhile), first after {@code reconnectDelayMillis} ({@code pistore.tcp.reconnectDelayMs},
 *       default 100), then twice as long each time up to {@code reconnectMaxDelayMillis}
 *       ({@code pistore.tcp.reconnectMaxDelayMs}, default 5000), until the host closes it;
 *   <li>{@code flushFrames} ({@code pistore.tcp.flushFrames}, default -1): an I/O thread that queues
 *       this many frames on a connection in one pass sends them at once, not at the end of the pass,
 *       so that the peer can start on them while this side goes on (0: only at the end of the pass;
 *       negative: a quarter of the queue depth, at least 4);
 *   <li>{@code maxQueueDepth}: the deepest queue a target grants (4096).
 * </ul>
 */
public final class TcpConfig {
    public int ioThreads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
    public long spinMicros = 50;
    public long pollMicros = 200;
    public boolean headerDigest;
    public boolean dataDigest;
    public int maxTransferBytes = TransportCapabilities.MAX_TRANSFER_BYTES;
    public int maxQueueDepth = 4096;
    public long requestTimeoutMillis = 30_000;
    public long connectTimeoutMillis = 10_000;
    public long frameTimeoutMillis = 30_000;
    public boolean reconnect = true;
    public long reconnectDelayMillis = 100;
    public long reconnectMaxDelayMillis = 5_000;
    public int flushFrames = -1;

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
        c.frameTimeoutMillis = longProp("frameTimeoutMs", c.frameTimeoutMillis, 1, Long.MAX_VALUE / 2_000_000);
        c.reconnect = Boolean.parseBoolean(System.getProperty("pistore.tcp.reconnect", "true"));
        c.reconnectDelayMillis = longProp("reconnectDelayMs", c.reconnectDelayMillis, 1, 3_600_000);
        c.reconnectMaxDelayMillis = longProp("reconnectMaxDelayMs", c.reconnectMaxDelayMillis, 1, 3_600_000);
        c.flushFrames = (int) longProp("flushFrames", c.flushFrames, -1, 1 << 20);
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
        return String.format(Locale.ROOT, "ioThreads=%d spin=%dus poll=%dus headerDigest=%s dataDigest=%s maxTransfer=%d"
                + " flushFrames=%s", ioThreads, spinMicros, pollMicros, headerDigest, dataDigest, maxTransferBytes,
                flushFrames < 0 ? "auto" : Integer.toString(flushFrames));
    }
}
