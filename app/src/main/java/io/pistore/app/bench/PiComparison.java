package io.pistore.app.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a side-by-side run says about PI modes on one transport: each mode's median IOPS and CPU per
 * request over the rounds, and each mode's IOPS against a baseline ({@code off} when it ran, else the
 * first mode) as the median of the per-round ratios. A ratio within a round compares two runs a
 * few seconds apart in one process; on a shared machine that is steadier than comparing medians
 * of separate processes, whose runs swing far more than the PI cost being measured.
 */
public final class PiComparison {
    /** One mode's figures. */
    public static final class Mode {
        public final String pi;
        public final double medianIops;
        public final double medianCpuUsPerOp;
        /** Per-round IOPS ratio to the baseline; empty for the baseline itself. */
        public final double[] ratios;

        Mode(String pi, double medianIops, double medianCpuUsPerOp, double[] ratios) {
            this.pi = pi;
            this.medianIops = medianIops;
            this.medianCpuUsPerOp = medianCpuUsPerOp;
            this.ratios = ratios;
        }

        public double medianRatio() {
            return median(ratios);
        }
    }

    public final String transport;
    public final String baseline;
    public final int rounds;
    public final List<Mode> modes;

    private PiComparison(String transport, String baseline, int rounds, List<Mode> modes) {
        this.transport = transport;
        this.baseline = baseline;
        this.rounds = rounds;
        this.modes = modes;
    }

    /**
     * Compares the runs of one transport (in any order; each has {@code pi} and {@code round} set).
     *
     * @throws IllegalArgumentException if a mode lacks a run in some round, or there are none
     */
    public static PiComparison of(List<BenchResult> runs) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("no runs to compare");
        }
        Map<String, Map<Integer, BenchResult>> byMode = new LinkedHashMap<>();
        int rounds = 0;
        for (BenchResult r : runs) {
            int round = Math.max(r.round, 1);
            rounds = Math.max(rounds, round);
            if (byMode.computeIfAbsent(r.pi, k -> new LinkedHashMap<>()).put(round, r) != null) {
                throw new IllegalArgumentException("two runs of pi=" + r.pi + " in round " + round);
            }
        }
        for (Map.Entry<String, Map<Integer, BenchResult>> e : byMode.entrySet()) {
            if (e.getValue().size() != rounds) {
                throw new IllegalArgumentException("pi=" + e.getKey() + " ran in " + e.getValue().size() + " of "
                        + rounds + " rounds");
            }
        }
        String base = byMode.containsKey("off") ? "off" : byMode.keySet().iterator().next();
        Map<Integer, BenchResult> baseRuns = byMode.get(base);
        List<Mode> modes = new ArrayList<>();
        for (Map.Entry<String, Map<Integer, BenchResult>> e : byMode.entrySet()) {
            double[] iops = new double[rounds];
            double[] cpu = new double[rounds];
            double[] ratios = e.getKey().equals(base) ? new double[0] : new double[rounds];
            for (int k = 1; k <= rounds; k++) {
                BenchResult r = e.getValue().get(k);
                iops[k - 1] = r.iops;
                cpu[k - 1] = r.cpuUsPerOp;
                if (ratios.length > 0) {
                    double b = baseRuns.get(k).iops;
                    ratios[k - 1] = b > 0 ? r.iops / b : Double.NaN;
                }
            }
            modes.add(new Mode(e.getKey(), median(iops), median(cpu), ratios));
        }
        return new PiComparison(runs.get(0).transport, base, rounds, modes);
    }

    /** The median (the mean of the middle two for an even count); NaN when empty. */
    static double median(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        double[] s = v.clone();
        Arrays.sort(s);
        int m = s.length / 2;
        return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    /** A few lines for people. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "side by side on %s, %d round%s (medians):%n", transport, rounds,
                rounds == 1 ? "" : "s"));
        for (Mode m : modes) {
            sb.append(String.format(Locale.ROOT, "  pi=%-6s iops=%.0f cpu_us_per_op=%.2f", m.pi, m.medianIops,
                    m.medianCpuUsPerOp));
            if (m.ratios.length > 0) {
                sb.append(String.format(Locale.ROOT, "  %s/%s=%.3f (rounds %.3f to %.3f)", m.pi, baseline,
                        m.medianRatio(), min(m.ratios), max(m.ratios)));
            }
            sb.append(System.lineSeparator());
        }
        return sb.toString().stripTrailing();
    }

    /** One JSON object. */
    public String toJson() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "{\"transport\":\"%s\",\"side_by_side\":{\"rounds\":%d,\"baseline\":\"%s\","
                + "\"modes\":[", transport, rounds, baseline));
        for (int i = 0; i < modes.size(); i++) {
            Mode m = modes.get(i);
            sb.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"pi\":\"%s\",\"iops_median\":%.0f,\"cpu_us_per_op_median\":%.2f", m.pi, m.medianIops,
                    m.medianCpuUsPerOp));
            if (m.ratios.length > 0) {
                sb.append(String.format(Locale.ROOT, ",\"ratio_median\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f",
                        m.medianRatio(), min(m.ratios), max(m.ratios)));
            }
            sb.append('}');
        }
        return sb.append("]}}").toString();
    }
}
