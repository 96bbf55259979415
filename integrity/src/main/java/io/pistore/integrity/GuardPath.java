package io.pistore.integrity;

import io.pistore.integrity.internal.NativeGuards;

/**
 * Which implementation computes guards in this process: the native library ({@code
 * libpistore-native}, CRC-16 and CRC-32C through ISA-L, CRC-64/NVME by its own carry-less folding)
 * or the pure-Java kernels. Decided once, at first use of {@link GuardType}; forced to pure Java by
 * {@code -Dpistore.native=false} or {@code PISTORE_NATIVE=0}. See docs/NATIVE.md.
 */
public final class GuardPath {
    private GuardPath() {
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
