package io.pistore.integrity.internal;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;

/**
 * The native address of a direct buffer, read from the JDK's {@code Buffer.address} field through
 * {@code sun.misc.Unsafe} (module {@code jdk.unsupported}, open to everyone), so that a native guard
 * update can take a plain {@code long}: a JNI call with an object argument also pays for a local
 * reference, {@code GetDirectBufferAddress} and its type check, about as much as the CRC of 256
 * bytes (see {@code GuardEntryBench}). When the field cannot be read (another JDK), {@link #of}
 * returns 0 and callers keep the object-taking entry.
 *
 * <p>The caller must keep the buffer reachable until the native code is done with the address
 * ({@code Reference.reachabilityFence}): the address does not hold the memory.
 */
final class DirectAddress {
    private static final sun.misc.Unsafe UNSAFE;
    private static final long ADDRESS_FIELD;

    static {
        sun.misc.Unsafe u = null;
        long offset = -1;
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            u = (sun.misc.Unsafe) f.get(null);
            offset = u.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            // Cross-check on a slice, whose address is its parent's plus the slice offset.
            ByteBuffer probe = ByteBuffer.allocateDirect(64);
            long base = u.getLong(probe, offset);
            long sliced = u.getLong(probe.slice(8, 8), offset);
            if (base == 0 || sliced != base + 8) {
                u = null;
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            u = null;
        }
        UNSAFE = u;
        ADDRESS_FIELD = offset;
    }

    private DirectAddress() {
    }

    /** Whether {@link #of} can tell addresses on this JDK. */
    static boolean available() {
        return UNSAFE != null;
    }

    /** The address of index 0 of direct buffer {@code b}, or 0 when it cannot be told. */
    static long of(ByteBuffer b) {
        return UNSAFE == null ? 0 : UNSAFE.getLong(b, ADDRESS_FIELD);
    }
}
