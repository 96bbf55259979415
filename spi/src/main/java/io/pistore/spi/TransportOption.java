package io.pistore.spi;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One setting a transport takes, by name {@code <transport>.<setting>} (camelCase, a unit suffix
 * such as {@code Ms} or {@code Micros} where there is one): its values, default and one line of
 * description. {@link #parse} turns text into the typed value or says in one line why it cannot.
 * Providers list theirs in {@link BlockTransportProvider#options()}; values travel in
 * {@link TransportOptions}.
 *
 * @param <T> the value's type
 */
public final class TransportOption<T> {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9]*(\\.[a-z][A-Za-z0-9]*)+");

    private final String name;
    private final String values;
    private final T defaultValue;
    private final String defaultText;
    private final String description;
    private final Function<String, T> parser;

    private TransportOption(String name, String values, T defaultValue, String defaultText, String description,
                            Function<String, T> parser) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("option name must be <transport>.<setting>, not '" + name + "'");
        }
        this.name = name;
        this.values = values;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.description = Objects.requireNonNull(description);
        this.parser = parser;
    }

    /** A whole number from {@code min} to {@code max}. */
    public static TransportOption<Long> number(String name, long defaultValue, long min, long max, String description) {
        if (min > max || defaultValue < min || defaultValue > max) {
            throw new IllegalArgumentException(name + ": default " + defaultValue + " outside " + min + " to " + max);
        }
        return new TransportOption<>(name, min + " to " + max, defaultValue, Long.toString(defaultValue), description,
                raw -> {
                    long x;
                    try {
                        x = Long.parseLong(raw);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(name + " must be a number, not '" + raw + "'");
                    }
                    if (x < min || x > max) {
                        throw new IllegalArgumentException(name + " must be " + min + " to " + max + ", not " + x);
                    }
                    return x;
                });
    }

    /** {@code true} or {@code false}, in any case; nothing else. */
    public static TransportOption<Boolean> flag(String name, boolean defaultValue, String description) {
        return new TransportOption<>(name, "true, false", defaultValue, Boolean.toString(defaultValue), description,
                raw -> {
                    if (raw.equalsIgnoreCase("true")) {
                        return true;
                    }
                    if (raw.equalsIgnoreCase("false")) {
                        return false;
                    }
                    throw new IllegalArgumentException(name + " must be true or false, not '" + raw + "'");
                });
    }

    /** One of {@code choices} (compared without case; the value is returned in lower case). */
    public static TransportOption<String> choice(String name, String defaultValue, List<String> choices,
                                                 String description) {
        List<String> c = List.copyOf(choices);
        if (!c.contains(defaultValue)) {
            throw new IllegalArgumentException(name + ": default " + defaultValue + " is not one of " + c);
        }
        return new TransportOption<>(name, String.join(", ", c), defaultValue, defaultValue, description, raw -> {
            String v = raw.toLowerCase(Locale.ROOT);
            if (!c.contains(v)) {
                throw new IllegalArgumentException(name + " must be " + orList(c) + ", not '" + raw + "'");
            }
            return v;
        });
    }

    /** Free text such as an address; {@code null} when not given and there is no default. */
    public static TransportOption<String> text(String name, String valueLabel, String defaultValue, String description) {
        return new TransportOption<>(name, valueLabel, defaultValue, defaultValue == null ? "none" : defaultValue,
                description, raw -> {
                    if (raw.isEmpty()) {
                        throw new IllegalArgumentException(name + " must not be empty");
                    }
                    return raw;
                });
    }

    private static String orList(List<String> c) {
        if (c.size() == 1) {
            return c.get(0);
        }
        return String.join(", ", c.subList(0, c.size() - 1)) + " or " + c.get(c.size() - 1);
    }

    /** {@code tcp.ioThreads}. */
    public String name() {
        return name;
    }

    /** The transport this option belongs to: the part of the name before the first dot. */
    public String transport() {
        return name.substring(0, name.indexOf('.'));
    }

    /** What values it takes, in words: {@code 1 to 64}, {@code true, false}, {@code auto, soft, disni}. */
    public String values() {
        return values;
    }

    public T defaultValue() {
        return defaultValue;
    }

    /** The default as it would be written, or {@code none}. */
    public String defaultText() {
        return defaultText;
    }

    public String description() {
        return description;
    }

    /**
     * The value {@code raw} (surrounding blanks ignored) stands for.
     *
     * @throws IllegalArgumentException naming the option, what it takes and what was given
     */
    public T parse(String raw) {
        return parser.apply(Objects.requireNonNull(raw).trim());
    }

    @Override
    public String toString() {
        return name + " (" + values + ", default " + defaultText + ")";
    }
}
