package io.pistore.app.cli;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** picocli converters for the PI words, with the integrity library's own messages. */
public final class PiConverters {
    private PiConverters() {
    }

    /** {@code DATA+META} sizes as written on the command line; the format is checked once all options are known. */
    public record Sizes(int data, int meta) {
        @Override
        public String toString() {
            return data + "+" + meta;
        }
    }

    public static final class SizesConverter implements ITypeConverter<Sizes> {
        @Override
        public Sizes convert(String value) {
            try {
                int[] dm = BlockFormat.parseSizes(value);
                return new Sizes(dm[0], dm[1]);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    public static final class GuardConverter implements ITypeConverter<GuardType> {
        @Override
        public GuardType convert(String value) {
            try {
                return GuardType.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    public static final class TypeConverter implements ITypeConverter<PiType> {
        @Override
        public PiType convert(String value) {
            long n = Numbers.parseUnsigned(value);
            if (n < 0 || n > 3) {
                throw new TypeConversionException("PI type must be 0, 1, 2 or 3, not " + value);
            }
            return PiType.of((int) n);
        }
    }

    public static final class LocationConverter implements ITypeConverter<PiLocation> {
        @Override
        public PiLocation convert(String value) {
            try {
                return PiLocation.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    public static final class ChecksConverter implements ITypeConverter<CheckFlags> {
        @Override
        public CheckFlags convert(String value) {
            try {
                return CheckFlags.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
