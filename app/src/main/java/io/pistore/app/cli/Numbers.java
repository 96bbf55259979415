package io.pistore.app.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Number options: decimal or {@code 0x} hex; sizes also take a {@code k}, {@code m} or {@code g} suffix. */
public final class Numbers {
    private Numbers() {
    }

    /** A non-negative number, decimal or 0x hex, up to 64 bits unsigned. */
    static long parseUnsigned(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT).replace("_", "");
        try {
            if (t.startsWith("0x")) {
                return Long.parseUnsignedLong(t.substring(2), 16);
            }
            return Long.parseUnsignedLong(t);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + s + "' is not a number (use decimal or 0x hex)");
        }
    }

    /** A byte count with an optional binary suffix: 4096, 0x1000, 64k, 1m, 2g, 1t, also 64KiB, 1GiB. */
    public static long parseSize(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ib")) {
            t = t.substring(0, t.length() - 2);
        }
        int shift = 0;
        if (t.endsWith("k")) {
            shift = 10;
        } else if (t.endsWith("m")) {
            shift = 20;
        } else if (t.endsWith("g")) {
            shift = 30;
        } else if (t.endsWith("t")) {
            shift = 40;
        }
        if (shift != 0) {
            t = t.substring(0, t.length() - 1);
        }
        long v;
        try {
            v = parseUnsigned(t);
        } catch (TypeConversionException e) {
            // name the forms that work: a user who typed 12XB or 1.5G needs the suffixes, not "not a number"
            throw new TypeConversionException("expected a size such as 4096, 64MiB, 512m or 1GiB "
                    + "(suffix k, m, g or t, with or without 'iB'), not '" + s + "'");
        }
        if (v < 0 || Long.numberOfLeadingZeros(v) <= shift) {
            throw new TypeConversionException("'" + s + "' is too large");
        }
        return v << shift;
    }

    /** For long options (unsigned 64-bit: a reference tag may use all 64 bits). */
    public static final class LongConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return parseUnsigned(value);
        }
    }

    /** For int options: 0 to 2^31 - 1. */
    public static final class IntConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            long v = parseUnsigned(value);
            if (v < 0 || v > Integer.MAX_VALUE) {
                throw new TypeConversionException("'" + value + "' is too large");
            }
            return (int) v;
        }
    }

    /** For byte-count options that need 64 bits (volume sizes). */
    public static final class LongSizeConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return parseSize(value);
        }
    }

    /** For byte-count options that fit an int. */
    public static final class SizeConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            long v = parseSize(value);
            if (v > Integer.MAX_VALUE) {
                throw new TypeConversionException("'" + value + "' is too large (at most 2g - 1)");
            }
            return (int) v;
        }
    }
}
