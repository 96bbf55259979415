package io.pistore.app.bench;

import java.util.Locale;

/** The figures of one bench run on one transport. */
public final class BenchResult {
    public String transport;
    public String rw;
    public int blockSize;
    public int queueDepth;
    public int queues;
    public String pi;
    /** Which round of a side-by-side run (1, 2, ...), or 0 for a single run. */
    public int round;
    public double seconds;
    public long ops;
    public long bytes;
    public double iops;
    public double mibPerSec;
    public double p50us;
    public double p99us;
    public double p999us;
    /** The longest request of the measured window (a stall shows here before it moves a percentile). */
    public double maxUs;
    /**
     * CPU time of the whole process over the measured seconds, per second (cores busy) and per
     * request; an embedded target's work is included. Negative when the JVM cannot tell.
     */
    public double cpuCores = -1;
    public double cpuUsPerOp = -1;
    public long guardErrors;
    public long appErrors;
    public long refErrors;
    public long ioErrors;
    public long dataMismatches;
    /** What went wrong first (an error's reason, a mismatch's block), or null when nothing did. */
    public String firstProblem;
    /** Requests still unanswered a minute after the run stopped (counted in {@link #ioErrors} too). */
    public long unanswered;
    /** Every measured request's latency in nanoseconds (for plots); null when the run did not happen. */
    public org.HdrHistogram.Histogram latency;
    /** Requests completed in each measured second, in order (for plots). */
    public long[] iopsPerSecond = new long[0];
    /** Whether the target ran in this process (its CPU time is then in {@link #cpuCores}). */
    public boolean embedded;
    /** Set when the transport could not run; the other fields are then empty. */
    public String unavailableCause;

    public long piErrors() {
        return guardErrors + appErrors + refErrors;
    }

    /** One JSON object. */
    public String toJson() {
        if (unavailableCause != null) {
            return String.format(Locale.ROOT, "{\"transport\":\"%s\",\"unavailable\":\"%s\"}", transport,
                    unavailableCause.replace("\\", "\\\\").replace("\"", "\\\""));
        }
        return String.format(Locale.ROOT,
                "{\"transport\":\"%s\",\"rw\":\"%s\",\"bs\":%d,\"qd\":%d,\"queues\":%d,\"pi\":\"%s\",%s\"seconds\":%.2f,"
                        + "\"ops\":%d,\"iops\":%.0f,\"mib_per_s\":%.1f,\"lat_us\":{\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f},"
                        + "\"pi_errors\":%d,\"pi_errors_by_kind\":{\"guard\":%d,\"app\":%d,\"ref\":%d},"
                        + "\"io_errors\":%d,\"data_mismatches\":%d,\"cpu\":{\"cores\":%.2f,\"us_per_op\":%.2f}}",
                transport, rw, blockSize, queueDepth, queues, pi, round > 0 ? "\"round\":" + round + "," : "", seconds,
                ops, iops, mibPerSec, p50us, p99us, p999us, maxUs,
                piErrors(), guardErrors, appErrors, refErrors, ioErrors, dataMismatches, cpuCores, cpuUsPerOp);
    }

    /** The human summary, a few lines. */
    public String summary() {
        if (unavailableCause != null) {
            return "transport=" + transport + " unavailable: " + unavailableCause;
        }
        return String.format(Locale.ROOT,
                "transport=%s rw=%s bs=%d qd=%d queues=%d pi=%s%s seconds=%.1f%n"
                        + "  iops=%.0f mib_per_s=%.1f lat_us p50=%.1f p99=%.1f p99.9=%.1f max=%.1f%n"
                        + "  pi_errors=%d (guard=%d app=%d ref=%d) io_errors=%d data_mismatches=%d%n"
                        + "  cpu: %.2f cores, %.2f us per request (this process%s)",
                transport, rw, blockSize, queueDepth, queues, pi, round > 0 ? " round=" + round : "", seconds, iops,
                mibPerSec, p50us, p99us, p999us, maxUs, piErrors(), guardErrors, appErrors, refErrors, ioErrors, dataMismatches, cpuCores, cpuUsPerOp,
                embedded ? ", the embedded target included" : "")
                + (unanswered == 0 ? "" : "\n  unanswered: " + unanswered + " requests, a minute after the run stopped")
                + (firstProblem == null ? "" : "\n  first problem: " + firstProblem);
    }
}
