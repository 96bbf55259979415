package io.pistore.integrity;

import io.pistore.integrity.internal.NativeGuards;

/**
 * Which implementation computes guards in this process: the native library ({@code
 * libpistore-native}: CRC-16/T10-DIF and CRC-64/NVME by its own carry-less folding, CRC-32C through
 * ISA-L when libisal is there) or the pure-Java kernels. Decided once, at first use of
 * {@link GuardType}; forced to pure Java by {@code -Dpistore.native=false} or
 * {@code PISTORE_NATIVE=0}. See docs/NATIVE.md.
 */
public final class GuardPath {
    private GuardPath() {
    }

    /**
     * Which guard implementation one operation uses ({@link PiContext.Builder#guardPath}), without
     * changing what the rest of the process uses: {@link #DEFAULT} is what {@link GuardType} bound
     * (native where available, per docs/NATIVE.md); {@link #JAVA} the pure-Java kernels;
     * {@link #NATIVE} the native kernel of the guard even where it is not the default (CRC-32C
     * through ISA-L), and only where {@link GuardType#hasNativePath()}.
     */
    public enum Use {
        DEFAULT, JAVA, NATIVE;

        /** Parses default | java | native (case-insensitive). */
        public static Use parse(String s) {
            switch (s.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "default": return DEFAULT;
                case "java": return JAVA;
                case "native": return NATIVE;
                default: throw new IllegalArgumentException("unknown guard path '" + s
                        + "' (expected default, java or native)");
            }
        }
    }

    /** Whether the native guard path is loaded and in use. */
    public static boolean isNative() {
        return NativeGuards.isAvailable();
    }

    /** Why the native path is not in use (to print, not to throw), or null when it is. */
    public static Throwable unavailabilityCause() {
        return NativeGuards.unavailabilityCause();
    }

    /** One line for a log or {@code --version}: which path, which kernels, or why not native. */
    public static String describe() {
        return NativeGuards.describe();
    }
}
