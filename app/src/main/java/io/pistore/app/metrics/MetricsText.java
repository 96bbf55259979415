package io.pistore.app.metrics;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the samples of a Prometheus text exposition (version 0.0.4): one sample per line,
 * {@code name{label="value",...} value [timestamp]}; comments and blank lines are skipped. Enough
 * for {@code pistore stats} and the tests to read what a server's endpoint says.
 */
public final class MetricsText {
    /** One sample: a metric name, its labels in the order written, and its value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String key) {
            return labels.get(key);
        }
    }

    private MetricsText() {
    }

    /** The samples of {@code text}, in order. */
    public static List<Sample> parse(String text) {
        List<Sample> out = new ArrayList<>();
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            try {
                out.add(parseLine(l));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + lineNo + " is no sample: " + l);
            }
        }
        return out;
    }

    private static Sample parseLine(String l) {
        int brace = l.indexOf('{');
        int space = l.indexOf(' ');
        String name;
        Map<String, String> labels = new LinkedHashMap<>();
        int at;
        if (brace >= 0 && (space < 0 || brace < space)) {
            name = l.substring(0, brace);
            at = parseLabels(l, brace + 1, labels);
        } else {
            name = l.substring(0, space);
            at = space;
        }
        String[] rest = l.substring(at).strip().split("\\s+");
        return new Sample(name, Collections.unmodifiableMap(labels), parseValue(rest[0]));
    }

    /** Reads {@code k="v",...}} from {@code i}; returns the index after the closing brace. */
    private static int parseLabels(String l, int i, Map<String, String> labels) {
        while (true) {
            while (l.charAt(i) == ',' || l.charAt(i) == ' ') {
                i++;
            }
            if (l.charAt(i) == '}') {
                return i + 1;
            }
            int eq = l.indexOf('=', i);
            String key = l.substring(i, eq).strip();
            i = eq + 1;
            if (l.charAt(i) != '"') {
                throw new IllegalArgumentException("label value without quotes");
            }
            i++;
            StringBuilder v = new StringBuilder();
            while (l.charAt(i) != '"') {
                char c = l.charAt(i++);
                if (c == '\\') {
                    char e = l.charAt(i++);
                    v.append(e == 'n' ? '\n' : e);
                } else {
                    v.append(c);
                }
            }
            labels.put(key, v.toString());
            i++;
        }
    }

    private static double parseValue(String s) {
        switch (s) {
            case "+Inf": return Double.POSITIVE_INFINITY;
            case "-Inf": return Double.NEGATIVE_INFINITY;
            case "NaN": return Double.NaN;
            default: return Double.parseDouble(s);
        }
    }

    /** The sum of the samples named {@code name} whose labels include every pair of {@code match}. */
    public static double sum(List<Sample> samples, String name, Map<String, String> match) {
        double total = 0;
        for (Sample s : samples) {
            if (s.name().equals(name) && s.labels().entrySet().containsAll(match.entrySet())) {
                total += s.value();
            }
        }
        return total;
    }
}
