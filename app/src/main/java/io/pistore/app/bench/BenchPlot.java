package io.pistore.app.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * A picture of bench runs as one self-contained SVG (no script, no fonts or styles from elsewhere):
 * on the left the latency by percentile, the tail stretched on a log scale (90, 99, 99.9, 99.99 %
 * equally spaced, as HdrHistogram's percentile plots do) against a log latency axis; on the right
 * the requests completed in each measured second. One series per transport, and per PI mode when
 * several ran; the rounds of one series are merged (latencies) and laid end to end (seconds), each
 * round after the first marked by a dashed line named "round N", each second by a dot.
 */
public final class BenchPlot {
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 440;
    private static final int TOP = 50;
    private static final int PLOT_H = 300;
    private static final int LEFT_X = 70;
    private static final int RIGHT_X = 570;
    private static final int PLOT_W = 380;
    /** The deepest tail drawn: 99.999 % (five nines); a run with fewer requests stops earlier. */
    private static final double MAX_NINES = 5;

    /** One line in each panel. */
    static final class Series {
        final String name;
        final Histogram latency;
        final List<Long> perSecond = new ArrayList<>();
        /** Where each round after the first begins in {@link #perSecond}. */
        final List<Integer> roundStarts = new ArrayList<>();

        Series(String name, Histogram latency) {
            this.name = name;
            this.latency = latency;
        }
    }

    private BenchPlot() {
    }

    /** The series of {@code results}, by transport and, when several ran, PI mode. */
    static List<Series> series(List<BenchResult> results) {
        long modes = results.stream().filter(r -> r.latency != null).map(r -> r.pi).distinct().count();
        Map<String, Series> byName = new LinkedHashMap<>();
        for (BenchResult r : results) {
            if (r.latency == null || r.latency.getTotalCount() == 0) {
                continue; // unavailable, or nothing completed: nothing to draw
            }
            String name = modes > 1 ? r.transport + " pi=" + r.pi : r.transport;
            Series s = byName.computeIfAbsent(name, n -> new Series(n, new Histogram(r.latency.getHighestTrackableValue(),
                    r.latency.getNumberOfSignificantValueDigits())));
            s.latency.add(r.latency);
            if (!s.perSecond.isEmpty() && r.iopsPerSecond.length > 0) {
                s.roundStarts.add(s.perSecond.size());
            }
            for (long n : r.iopsPerSecond) {
                s.perSecond.add(n);
            }
        }
        return new ArrayList<>(byName.values());
    }

    /** The SVG document of {@code results}, headed by {@code title}. */
    public static String svg(String title, List<BenchResult> results) {
        List<Series> series = series(results);
        StringBuilder sb = new StringBuilder();
        sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        sb.append(text(WIDTH / 2.0, 22, "middle", 15, title));
        latencyPanel(sb, series);
        iopsPanel(sb, series);
        legend(sb, series);
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static void latencyPanel(StringBuilder sb, List<Series> series) {
        double nines = 1;
        long lo = Long.MAX_VALUE;
        long hi = 1;
        for (Series s : series) {
            nines = Math.max(nines, Math.min(MAX_NINES, Math.log10(s.latency.getTotalCount())));
            lo = Math.min(lo, Math.max(1, s.latency.getMinValue()));
            hi = Math.max(hi, s.latency.getMaxValue());
        }
        double xMax = Math.ceil(nines);
        double yLo = Math.floor(Math.log10(lo == Long.MAX_VALUE ? 1000 : lo) - 3); // decades of microseconds
        double yHi = Math.ceil(Math.log10(Math.max(hi, 1)) - 3);
        if (yHi <= yLo) {
            yHi = yLo + 1;
        }
        frame(sb, LEFT_X, "latency by percentile (log scales)", "percentile", "latency (µs)");
        for (int k = 0; k <= xMax; k++) {
            double x = LEFT_X + PLOT_W * k / xMax;
            sb.append(gridLine(x, TOP, x, TOP + PLOT_H));
            sb.append(text(x, TOP + PLOT_H + 16, "middle", 11, percentLabel(k)));
        }
        for (double d = yLo; d <= yHi; d++) {
            double y = TOP + PLOT_H - PLOT_H * (d - yLo) / (yHi - yLo);
            sb.append(gridLine(LEFT_X, y, LEFT_X + PLOT_W, y));
            sb.append(text(LEFT_X - 6, y + 4, "end", 11, number(Math.pow(10, d))));
        }
        for (int i = 0; i < series.size(); i++) {
            Series s = series.get(i);
            double sNines = Math.min(xMax, Math.log10(s.latency.getTotalCount()));
            StringBuilder pts = new StringBuilder();
            for (double n = 0; n <= sNines + 1e-9; n += 0.02) {
                double pct = 100 * (1 - Math.pow(10, -n));
                double us = Math.max(s.latency.getValueAtPercentile(pct) / 1000.0, Math.pow(10, yLo));
                double x = LEFT_X + PLOT_W * n / xMax;
                double y = TOP + PLOT_H - PLOT_H * (Math.log10(us) - yLo) / (yHi - yLo);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            sb.append(polyline("latency", s.name, COLORS[i % COLORS.length], pts));
        }
    }

    private static void iopsPanel(StringBuilder sb, List<Series> series) {
        int seconds = 1;
        long max = 1;
        for (Series s : series) {
            seconds = Math.max(seconds, s.perSecond.size());
            for (long n : s.perSecond) {
                max = Math.max(max, n);
            }
        }
        double yMax = niceCeiling(max);
        frame(sb, RIGHT_X, "requests per second", "measured second (rounds one after another)", "IOPS");
        for (int k = 0; k <= 4; k++) {
            double y = TOP + PLOT_H - PLOT_H * k / 4.0;
            sb.append(gridLine(RIGHT_X, y, RIGHT_X + PLOT_W, y));
            sb.append(text(RIGHT_X - 6, y + 4, "end", 11, number(yMax * k / 4)));
        }
        int step = Math.max(1, (int) Math.ceil(seconds / 10.0));
        for (int k = 0; k <= seconds; k += step) {
            double x = RIGHT_X + PLOT_W * (double) k / seconds;
            sb.append(text(x, TOP + PLOT_H + 16, "middle", 11, Integer.toString(k)));
        }
        // where the rounds meet: the first series' boundaries (every series runs the same rounds)
        List<Integer> starts = series.isEmpty() ? List.of() : series.get(0).roundStarts;
        for (int r = 0; r < starts.size(); r++) {
            double x = RIGHT_X + PLOT_W * (double) starts.get(r) / seconds;
            sb.append(String.format(Locale.ROOT, "<line class=\"round\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                    + "stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n", x, TOP, x, TOP + PLOT_H));
            sb.append(text(x + 3, TOP + 12, "start", 10, "round " + (r + 2)));
        }
        for (int i = 0; i < series.size(); i++) {
            Series s = series.get(i);
            String color = COLORS[i % COLORS.length];
            StringBuilder pts = new StringBuilder();
            StringBuilder dots = new StringBuilder();
            for (int k = 0; k < s.perSecond.size(); k++) {
                // each second's count drawn at the end of that second
                double x = RIGHT_X + PLOT_W * (k + 1.0) / seconds;
                double y = TOP + PLOT_H - PLOT_H * s.perSecond.get(k) / yMax;
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                dots.append(String.format(Locale.ROOT, "<circle class=\"second\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                        + "fill=\"%s\"/>\n", x, y, color));
            }
            sb.append(polyline("iops", s.name, color, pts));
            sb.append(dots);
        }
    }

    private static void legend(StringBuilder sb, List<Series> series) {
        double x = LEFT_X;
        double y = TOP + PLOT_H + 52;
        for (int i = 0; i < series.size(); i++) {
            String c = COLORS[i % COLORS.length];
            sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    + "stroke-width=\"3\"/>\n", x, y - 4, x + 24, y - 4, c));
            sb.append(text(x + 30, y, "start", 12, series.get(i).name));
            x += 40 + 8 * series.get(i).name.length();
            if (x > WIDTH - 150) {
                x = LEFT_X;
                y += 18;
            }
        }
    }

    private static void frame(StringBuilder sb, int x0, String title, String xLabel, String yLabel) {
        sb.append(text(x0 + PLOT_W / 2.0, TOP - 10, "middle", 13, title));
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#444\"/>\n", x0, TOP, PLOT_W, PLOT_H));
        sb.append(text(x0 + PLOT_W / 2.0, TOP + PLOT_H + 34, "middle", 12, xLabel));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\" "
                + "transform=\"rotate(-90 %d %d)\">%s</text>\n", x0 - 52, TOP + PLOT_H / 2, x0 - 52, TOP + PLOT_H / 2,
                escape(yLabel)));
    }

    private static String polyline(String panel, String name, String color, CharSequence points) {
        return String.format(Locale.ROOT, "<polyline class=\"%s\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
                + "stroke-width=\"2\" points=\"%s\"><title>%s</title></polyline>\n", panel, escape(name), color,
                points.toString().strip(), escape(name));
    }

    private static String gridLine(double x1, double y1, double x2, double y2) {
        return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                x1, y1, x2, y2);
    }

    private static String text(double x, double y, String anchor, int size, String s) {
        return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">%s</text>\n",
                x, y, anchor, size, escape(s));
    }

    /** 0 → "0%", 1 → "90%", 2 → "99%", 3 → "99.9%", ... */
    static String percentLabel(int nines) {
        if (nines == 0) {
            return "0%";
        }
        if (nines == 1) {
            return "90%";
        }
        return nines == 2 ? "99%" : "99." + "9".repeat(nines - 2) + "%";
    }

    private static double niceCeiling(long max) {
        double p = Math.pow(10, Math.floor(Math.log10(max)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= max) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String number(double v) {
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%sM", trim(v / 1e6));
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%sk", trim(v / 1e3));
        }
        return trim(v);
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, "%.2f", v);
        return s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
