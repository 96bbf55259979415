package io.pistore.app.bench;

import io.pistore.integrity.BlockFormat;
import io.pistore.spi.TransportOptions;
import java.util.Locale;

/** What one bench run does. Mutable; the CLI fills it from flags. */
public final class BenchOptions {
    /** The access pattern. */
    public enum Rw {
        RANDREAD, RANDWRITE, RANDRW, READ, WRITE, VERIFY;

        public static Rw parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--rw must be randread, randwrite, randrw, read, write or verify, not '"
                        + s + "'");
            }
        }

        public String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Where PI is made and checked. */
    public enum PiMode {
        /** The host has no PI in memory; the next hop inserts it on writes and checks and strips it on reads. */
        INSERT,
        /** The host generates PI into a separate metadata buffer and checks it after reads; every hop checks. */
        PASS,
        /** No PI: the embedded volume has no metadata; on a PI volume, requests carry no check flags. */
        OFF;

        public static PiMode parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--pi must be insert, pass or off, not '" + s + "'");
            }
        }

        /** A comma-separated list of modes, each at most once, in the order given. */
        public static java.util.List<PiMode> parseList(String s) {
            java.util.List<PiMode> modes = new java.util.ArrayList<>();
            for (String part : s.split(",", -1)) {
                PiMode m = parse(part);
                if (modes.contains(m)) {
                    throw new IllegalArgumentException("--pi names " + m.cliName() + " twice");
                }
                modes.add(m);
            }
            return modes;
        }

        public String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public String transport = "local";
    /** Settings of the transports ({@code tcp.ioThreads=4}, ...); checked when a transport is found. */
    public TransportOptions transportOptions = TransportOptions.NONE;
    /** null: an embedded target in this process with a memory volume. */
    public String target;
    public String volume = "bench";
    /** Set by Ctrl-C (SIGINT) or SIGTERM: the run ends now and its summary covers the time so far. */
    public final java.util.concurrent.atomic.AtomicBoolean interrupted = new java.util.concurrent.atomic.AtomicBoolean();
    /** How long the first connection to --target may wait for a target that is starting; 0: fails at once. */
    public long connectTimeoutMillis;
    public Rw rw = Rw.RANDRW;
    public int blockSize = 4096;
    public int queueDepth = 32;
    public int queues = 1;
    public int seconds = 10;
    /** Seconds run before measuring starts (JIT warm-up), not counted in the summary. */
    public int rampSeconds = 1;
    public PiMode pi = PiMode.INSERT;
    /** Embedded volume: format and size. */
    public BlockFormat format = BlockFormat.of(4096, 8);
    public long sizeBytes = 1L << 30;
    /** Embedded target on file volumes in this directory instead of memory (null: memory). */
    public java.nio.file.Path dataDir;
    /** Embedded file volumes: bytes of Caffeine read cache in front of each (0: none). */
    public long cacheBytes;
    public boolean progress = true;
    /**
     * Serve metrics at this address ({@code HOST:PORT} or a loopback port); null: none. With an
     * embedded target its figures and the host's; with {@link #target} the host's alone (PI errors
     * caught on the host, reconnects).
     */
    public String metrics;
    /** With {@link #metrics}: one request in this many has its latency timed (1: every one). */
    public int metricsLatencySample = io.pistore.engine.stats.TargetStats.DEFAULT_LATENCY_SAMPLE;
    /** Embedded target, workloads that read: write every block once before starting. */
    public boolean prefill = true;

    /**
     * Checks that {@code --bs} is a whole number of data blocks of {@code dataSize} bytes.
     *
     * @param whose names the format in the message: "--format's", "the volume's"
     */
    public void checkBlockSize(int dataSize, String whose) {
        if (blockSize % dataSize != 0) {
            throw new IllegalArgumentException("--bs " + blockSize + " is not a multiple of " + whose + " "
                    + dataSize + "-byte blocks");
        }
    }

    /** Checks the options against each other; throws IllegalArgumentException with a one-line reason. */
    public void validate() {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("--bs must be positive");
        }
        if (target == null && dataDir == null) {
            // the embedded memory volume takes --format: refuse a --bs it cannot serve before
            // creating and prefilling it (a 1 GiB prefill takes seconds)
            checkBlockSize(format.dataSize(), "--format's");
        }
        if (queueDepth < 1 || queueDepth > 4096) {
            throw new IllegalArgumentException("--qd must be 1 to 4096, not " + queueDepth);
        }
        if (queues < 1 || queues > 64) {
            throw new IllegalArgumentException("--queues must be 1 to 64, not " + queues);
        }
        if (seconds < 1) {
            throw new IllegalArgumentException("--seconds must be at least 1");
        }
        if (rampSeconds < 0) {
            throw new IllegalArgumentException("--ramp must not be negative");
        }
    }
}
