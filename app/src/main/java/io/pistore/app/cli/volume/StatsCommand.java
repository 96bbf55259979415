package io.pistore.app.cli.volume;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.metrics.MetricsText;
import io.pistore.app.metrics.VolumeFigures;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pistore stats}: a running server's figures per volume, one table per interval, like iostat -x 1. */
@Command(name = "stats", sortOptions = false,
        description = {"Prints a running server's figures per volume every interval, from its metrics endpoint "
                + "(serve --metrics): reads and writes per second, MiB/s, latency p50 and p99 in the engine, "
                + "requests in flight and PI errors (total, and new in the interval after a '+').",
            "The first table comes after one interval. Latency quantiles come from the endpoint's histogram "
                + "buckets (1-2-5 steps), interpolated inside a bucket."})
public final class StatsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOption config;

    @Option(names = "--target", paramLabel = "HOST:PORT", required = true,
            description = "The server's metrics address (what serve --metrics was given; a bare PORT means "
                    + "127.0.0.1), or a full http:// URL.")
    String target;

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "1",
            description = "Seconds between tables (default: ${DEFAULT-VALUE}).")
    int interval;

    @Option(names = "--count", paramLabel = "N", defaultValue = "0",
            description = "Stop after N tables (default: run until interrupted).")
    int count;

    /** Made when the command runs, not when the command line is built (a client sets up TLS). */
    private HttpClient http;

    @Override
    public Integer call() throws Exception {
        if (interval < 1) {
            throw CliException.usage("--interval must be at least 1, not " + interval);
        }
        if (count < 0) {
            throw CliException.usage("--count must not be negative");
        }
        URI uri = uri(target);
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        PrintWriter out = spec.commandLine().getOut();
        Map<String, VolumeFigures> before = scrape(uri);
        long at = System.nanoTime();
        long t0 = at;
        DateTimeFormatter time = DateTimeFormatter.ofPattern("HH:mm:ss");
        for (int n = 1; count == 0 || n <= count; n++) {
            long wake = t0 + TimeUnit.SECONDS.toNanos((long) interval * n);
            long now;
            while ((now = System.nanoTime()) < wake) {
                TimeUnit.NANOSECONDS.sleep(wake - now);
            }
            Map<String, VolumeFigures> after = scrape(uri);
            long atNow = System.nanoTime();
            out.println(table(LocalTime.now().format(time), before, after, (atNow - at) / 1e9));
            out.flush();
            before = after;
            at = atNow;
        }
        return ExitCodes.OK;
    }

    static URI uri(String target) {
        String t = target.strip();
        if (t.startsWith("http://") || t.startsWith("https://")) {
            return URI.create(t);
        }
        if (!t.contains(":")) {
            t = "127.0.0.1:" + t;
        }
        try {
            return URI.create("http://" + t + "/metrics");
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--target: expected HOST:PORT, PORT or a URL, not '" + target + "'");
        }
    }

    private Map<String, VolumeFigures> scrape(URI uri) throws IOException, InterruptedException {
        HttpResponse<String> r;
        try {
            r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw CliException.usage("cannot read metrics at " + uri + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage())
                    + " (is serve running with --metrics?)");
        }
        if (r.statusCode() != 200) {
            throw CliException.usage("metrics at " + uri + " answered HTTP " + r.statusCode());
        }
        try {
            return VolumeFigures.of(MetricsText.parse(r.body()));
        } catch (IllegalArgumentException e) {
            throw CliException.usage(uri + " is no metrics endpoint: " + e.getMessage());
        }
    }

    /** One table: a heading line with the time, then one line per volume. */
    static String table(String time, Map<String, VolumeFigures> before, Map<String, VolumeFigures> after,
                        double seconds) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-8s %-16s %9s %9s %8s %8s %9s %9s %6s %s", time, "volume", "r/s", "w/s",
                "rMiB/s", "wMiB/s", "p50_us", "p99_us", "inflt", "pi_err"));
        if (after.isEmpty()) {
            sb.append(System.lineSeparator()).append(String.format(Locale.ROOT, "%-8s %s", "", "(no volume has had a request yet)"));
        }
        for (Map.Entry<String, VolumeFigures> e : after.entrySet()) {
            VolumeFigures.Interval i = e.getValue().since(before.get(e.getKey()), seconds);
            sb.append(System.lineSeparator()).append(String.format(Locale.ROOT,
                    "%-8s %-16s %9.0f %9.0f %8.1f %8.1f %9s %9s %6d %d%s", "", e.getKey(), i.readsPerSec(),
                    i.writesPerSec(), i.readMiBPerSec(), i.writeMiBPerSec(), micros(i.p50Seconds()),
                    micros(i.p99Seconds()), i.inFlight(), i.piErrors(),
                    i.newPiErrors() > 0 ? " (+" + i.newPiErrors() + ")" : ""));
        }
        return sb.toString();
    }

    private static String micros(double seconds) {
        return Double.isNaN(seconds) ? "-" : String.format(Locale.ROOT, "%.1f", seconds * 1e6);
    }
}
