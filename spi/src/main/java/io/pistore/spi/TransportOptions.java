package io.pistore.spi;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Settings for transports as text, by option name ({@code tcp.ioThreads=4}, {@code rdma.pi=cpu}),
 * immutable. A provider reads the options it declares with {@link #get}; options of other
 * transports are carried along untouched, so one set can serve {@code --transport all}.
 * {@link #check} refuses names a transport does not declare and values it cannot parse.
 */
public final class TransportOptions {
    /** No settings: every option at its default. */
    public static final TransportOptions NONE = new TransportOptions(new TreeMap<>());

    private final Map<String, String> values;

    private TransportOptions(TreeMap<String, String> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    /** These settings (names are checked later, against the providers, by {@link #check}). */
    public static TransportOptions of(Map<String, String> values) {
        TreeMap<String, String> m = new TreeMap<>();
        values.forEach((k, v) -> m.put(requireName(k), v.trim()));
        return new TransportOptions(m);
    }

    /**
     * Settings written {@code NAME=VALUE}, as on a command line.
     *
     * @throws IllegalArgumentException for an item without {@code =} or without a name
     */
    public static TransportOptions parse(List<String> items) {
        TreeMap<String, String> m = new TreeMap<>();
        for (String item : items) {
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected a transport option as NAME=VALUE, e.g. tcp.ioThreads=4,"
                        + " not '" + item + "'");
            }
            m.put(requireName(item.substring(0, eq)), item.substring(eq + 1).trim());
        }
        return new TransportOptions(m);
    }

    private static String requireName(String name) {
        String n = name.trim();
        int dot = n.indexOf('.');
        if (dot <= 0 || dot == n.length() - 1) {
            throw new IllegalArgumentException("a transport option is named <transport>.<setting>, e.g. "
                    + "tcp.ioThreads, not '" + name + "'");
        }
        return n;
    }

    /** These settings with {@code name} set to {@code value}. */
    public TransportOptions with(String name, String value) {
        TreeMap<String, String> m = new TreeMap<>(values);
        m.put(requireName(name), value.trim());
        return new TransportOptions(m);
    }

    /** These settings overridden by {@code other}'s. */
    public TransportOptions withAll(TransportOptions other) {
        TreeMap<String, String> m = new TreeMap<>(values);
        m.putAll(other.values);
        return new TransportOptions(m);
    }

    /**
     * The value of {@code option}: the given one, parsed, or its default.
     *
     * @throws IllegalArgumentException when the given text is not a value of the option
     */
    public <T> T get(TransportOption<T> option) {
        String raw = values.get(option.name());
        return raw == null ? option.defaultValue() : option.parse(raw);
    }

    /** Whether {@code option} is given (not left at its default). */
    public boolean isSet(TransportOption<?> option) {
        return values.containsKey(option.name());
    }

    /**
     * Checks the settings of {@code transport}: each must be one of {@code declared} and parse.
     * Settings of other transports are not looked at.
     *
     * @throws IllegalArgumentException naming the first bad setting and why
     */
    public void check(String transport, List<TransportOption<?>> declared) {
        String prefix = transport + ".";
        for (Map.Entry<String, String> e : values.entrySet()) {
            if (!e.getKey().startsWith(prefix)) {
                continue;
            }
            TransportOption<?> o = declared.stream().filter(d -> d.name().equals(e.getKey())).findFirst().orElse(null);
            if (o == null) {
                throw new IllegalArgumentException("unknown option '" + e.getKey() + "' of transport " + transport
                        + (declared.isEmpty() ? "; it takes none" : "; it takes: " + declared.stream()
                        .map(TransportOption::name).collect(Collectors.joining(", "))));
            }
            o.parse(e.getValue());
        }
    }

    /** The transports these settings name (the part of each name before its first dot). */
    public List<String> transports() {
        return values.keySet().stream().map(k -> k.substring(0, k.indexOf('.'))).distinct().collect(Collectors.toList());
    }

    /** Name to text, sorted by name. */
    public Map<String, String> asMap() {
        return values;
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TransportOptions && ((TransportOptions) o).values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    /** {@code tcp.ioThreads=4 rdma.pi=cpu}, or {@code defaults}. */
    @Override
    public String toString() {
        return values.isEmpty() ? "defaults" : values.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" "));
    }
}
