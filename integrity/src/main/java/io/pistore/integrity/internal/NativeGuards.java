package io.pistore.integrity.internal;

import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Objects;

/**
 * The optional native guard path: {@code libpistore-native.so}, built by the Maven build when gcc
 * and the JNI headers are there, shipped in the jar under {@code META-INF/native/linux-x86_64/},
 * and loaded once, on first use, from a temporary copy. When it cannot be used, the reason is kept
 * and {@link #unavailabilityCause()} returns it (the way Netty's {@code Epoll} does); callers then
 * stay on the pure-Java kernels.
 *
 * <p>Forcing pure Java: system property {@code pistore.native=false}, or environment variable
 * {@code PISTORE_NATIVE=0}. A library elsewhere can be named with {@code pistore.native.library}.
 * {@code pistore.native.crc16=isal} binds ISA-L's {@code crc16_t10dif} (when libisal loads) in place
 * of the library's own CRC-16 kernel, for measuring one against the other. {@code
 * pistore.native.kernel=pclmulqdq} keeps the CRC kernels to 128-bit PCLMULQDQ on a CPU that has
 * VPCLMULQDQ, and {@code =none} chooses as on a CPU without PCLMULQDQ (so, pure Java): for tests
 * and measurements of what other CPUs get.
 *
 * <p>Every native entry point is reached through the checked methods here: offsets, lengths and
 * counts are validated against the buffer in Java before the call, so bad input throws
 * {@link IndexOutOfBoundsException} and never reaches C.
 */
public final class NativeGuards {
    /** Algorithm numbers shared with pistore_native.c. */
    static final int ALG_CRC16 = 0;
    static final int ALG_CRC64 = 1;
    static final int ALG_CRC32C = 2;

    private static final int CAP_CRC16 = 1;
    private static final int CAP_CRC64 = 2;
    private static final int CAP_CRC32C = 4;
    private static final int CAP_NO_PCLMUL = 16;
    private static final int CAP_CRC16_ISAL = 32;
    /** init0 option: ISA-L's crc16_t10dif in place of our CRC-16 kernel. */
    private static final int OPT_CRC16_ISAL = 1;
    private static final int OPT_NO_VPCLMUL = 2;
    private static final int OPT_NO_PCLMUL = 4;

    static final String RESOURCE = "/META-INF/native/linux-x86_64/libpistore-native.so";

    private static final int CAPS;
    private static final Throwable CAUSE;
    private static final String DESCRIPTION;

    static {
        int caps = 0;
        Throwable cause = null;
        String description = "";
        try {
            String reason = disabledBySetting();
            if (reason != null) {
                throw new UnsupportedOperationException(reason);
            }
            load();
            try {
                caps = init0(options());
                description = describe0();
            } catch (UnsatisfiedLinkError e) {
                // a library from another build, without these entry points
                throw new UnsupportedOperationException("library failed to load: " + e.getMessage(), e);
            }
            if ((caps & (CAP_CRC16 | CAP_CRC64)) == 0) {
                throw new UnsupportedOperationException((caps & CAP_NO_PCLMUL) != 0
                        ? "CPU lacks PCLMULQDQ (with SSSE3 and SSE4.1), which the CRC-16 and CRC-64 kernels need"
                                + ("none".equalsIgnoreCase(System.getProperty("pistore.native.kernel"))
                                        ? " (as -Dpistore.native.kernel=none makes it act)" : "")
                        : "libpistore-native loaded but no kernel can run here: " + description);
            }
        } catch (Throwable t) {
            caps = 0;
            cause = t;
        }
        CAPS = caps;
        CAUSE = cause;
        DESCRIPTION = description;
    }

    private NativeGuards() {
    }

    /** init0's options from pistore.native.crc16 and pistore.native.kernel (see the class comment). */
    private static int options() {
        int opts = "isal".equalsIgnoreCase(System.getProperty("pistore.native.crc16")) ? OPT_CRC16_ISAL : 0;
        String k = System.getProperty("pistore.native.kernel", "auto").trim().toLowerCase(Locale.ROOT);
        switch (k) {
            case "auto":
                return opts;
            case "pclmulqdq":
                return opts | OPT_NO_VPCLMUL;
            case "none":
                return opts | OPT_NO_PCLMUL;
            default:
                throw new UnsupportedOperationException("pistore.native.kernel must be auto, pclmulqdq or none, not '"
                        + k + "'");
        }
    }

    /** Whether the native library is loaded and at least one native guard kernel is in use. */
    public static boolean isAvailable() {
        return CAUSE == null;
    }

    /** Why the native path is not in use, or null when it is. */
    public static Throwable unavailabilityCause() {
        return CAUSE;
    }

    /** Throws {@link #unavailabilityCause()} wrapped in an {@link UnsatisfiedLinkError} when not available. */
    public static void ensureAvailability() {
        if (CAUSE != null) {
            throw (UnsatisfiedLinkError) new UnsatisfiedLinkError("pistore native guard path unavailable: "
                    + CAUSE.getMessage()).initCause(CAUSE);
        }
    }

    /**
     * One line for logs, {@code pistore --version} and {@code pistore pi speed}: per guard, which path
     * is bound ({@code native(kernel)}, {@code java}, {@code jdk}) and, where it is not native, why.
     * Starts with {@code guards: native} or {@code guards: pure Java (native unavailable: cause)}.
     */
    public static String describe() {
        if (CAUSE != null) {
            return "guards: pure Java (native unavailable: " + CAUSE.getMessage()
                    + "); crc16=java crc64=java crc32c=jdk ip=java";
        }
        boolean c32 = crc32cOptedIn();
        String crc32c;
        if (c32) {
            crc32c = "native(isal)";
        } else if (hasCrc32c()) {
            crc32c = "jdk(native is opt-in: -Dpistore.native.crc32c=true)";
        } else {
            crc32c = "jdk(no native kernel: " + libraryPart("crc32c") + ")";
        }
        return "guards: native; crc16=" + (hasCrc16() ? "native(" + libraryPart("crc16") + ")" : "java")
                + " crc64=" + (hasCrc64() ? "native(" + libraryPart("crc64") + ")" : "java")
                + " crc32c=" + crc32c + " ip=java(no native kernel)";
    }

    /** The library's word for one guard: "crc16=vpclmulqdq-avx512 ... (why)" read back per key. */
    private static String libraryPart(String key) {
        int at = DESCRIPTION.indexOf(key + "=");
        if (at < 0) {
            return "?";
        }
        int from = at + key.length() + 1;
        int end = DESCRIPTION.indexOf(' ', from);
        String v = end < 0 ? DESCRIPTION.substring(from) : DESCRIPTION.substring(from, end);
        int why = DESCRIPTION.indexOf(" (");
        if (v.equals("unavailable") && why >= 0 && DESCRIPTION.endsWith(")")) {
            return DESCRIPTION.substring(why + 2, DESCRIPTION.length() - 1);
        }
        return v;
    }

    private static boolean crc32cOptedIn() {
        return hasCrc32c() && "true".equalsIgnoreCase(System.getProperty("pistore.native.crc32c"));
    }

    /** Whether CRC-16 is bound to ISA-L ({@code -Dpistore.native.crc16=isal}) rather than our kernel. */
    static boolean crc16IsIsal() {
        return (CAPS & CAP_CRC16_ISAL) != 0;
    }

    static boolean hasCrc16() {
        return (CAPS & CAP_CRC16) != 0;
    }

    static boolean hasCrc64() {
        return (CAPS & CAP_CRC64) != 0;
    }

    static boolean hasCrc32c() {
        return (CAPS & CAP_CRC32C) != 0;
    }

    /**
     * The algorithm {@code GuardType} binds for a guard: the native variant of {@code java} when the
     * library has a kernel for it, otherwise {@code java} itself.
     */
    public static GuardAlgorithm select(GuardAlgorithm java) {
        if (java == Crc16T10Dif.INSTANCE && hasCrc16()) {
            return new NativeGuardAlgorithm(java, ALG_CRC16, NativeGuardAlgorithm.NATIVE_MIN_LEN);
        }
        if (java == Crc64Nvme.INSTANCE && hasCrc64()) {
            return new NativeGuardAlgorithm(java, ALG_CRC64, NativeGuardAlgorithm.NATIVE_MIN_LEN);
        }
        // CRC-32C: ISA-L through JNI did not beat the JDK intrinsic reliably (a tie in the calmer of
        // two side-by-side runs, docs/NATIVE.md), so the JDK stays the default; opt in with
        // -Dpistore.native.crc32c=true.
        if (java == Crc32cGuard.INSTANCE && hasCrc32c()
                && "true".equalsIgnoreCase(System.getProperty("pistore.native.crc32c"))) {
            return new NativeGuardAlgorithm(java, ALG_CRC32C, NativeGuardAlgorithm.NATIVE_MIN_LEN);
        }
        return java;
    }

    /**
     * The native algorithm for {@code java} whatever {@link #select}'s default policy (so also CRC-32C
     * through ISA-L), with the same short-update threshold as the bound one; null when the library
     * has no kernel for it. What {@code GuardPath.Use.NATIVE} runs.
     */
    public static GuardAlgorithm nativeAlgorithm(GuardAlgorithm java) {
        GuardAlgorithm bound = select(java);
        if (bound != java) {
            return bound;
        }
        if (java == Crc32cGuard.INSTANCE && hasCrc32c()) {
            return new NativeGuardAlgorithm(java, ALG_CRC32C, NativeGuardAlgorithm.NATIVE_MIN_LEN);
        }
        return null;
    }

    /** The native variant of {@code java} regardless of {@link #select}'s policy, or null (tests, benchmarks). */
    public static GuardAlgorithm nativeVariant(GuardAlgorithm java) {
        if (java == Crc16T10Dif.INSTANCE && hasCrc16()) {
            return new NativeGuardAlgorithm(java, ALG_CRC16, 0);
        }
        if (java == Crc64Nvme.INSTANCE && hasCrc64()) {
            return new NativeGuardAlgorithm(java, ALG_CRC64, 0);
        }
        if (java == Crc32cGuard.INSTANCE && hasCrc32c()) {
            return new NativeGuardAlgorithm(java, ALG_CRC32C, 0);
        }
        return null;
    }

    private static String disabledBySetting() {
        String p = System.getProperty("pistore.native");
        if (p != null && (p.equalsIgnoreCase("false") || p.equals("0") || p.equalsIgnoreCase("off"))) {
            return "disabled by system property pistore.native=" + p;
        }
        String e = System.getenv("PISTORE_NATIVE");
        if (e != null && (e.equals("0") || e.equalsIgnoreCase("false") || e.equalsIgnoreCase("off"))) {
            return "disabled by environment PISTORE_NATIVE=" + e;
        }
        return null;
    }

    private static void load() throws IOException {
        String explicit = System.getProperty("pistore.native.library");
        if (explicit != null && !explicit.isEmpty()) {
            systemLoad(Path.of(explicit));
            return;
        }
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new UnsupportedOperationException("no native library for this OS/arch in the jar (" + os + "/"
                    + arch + "; only linux/x86-64 is built)");
        }
        try (InputStream in = NativeGuards.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new UnsupportedOperationException("no native library for this OS/arch in the jar (" + RESOURCE
                        + " missing: built without gcc or JNI headers?)");
            }
            Path tmp = Files.createTempFile("libpistore-native", ".so");
            try {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                systemLoad(tmp);
            } finally {
                // Once loaded, the mapping keeps the file alive; nothing is left behind in /tmp.
                Files.deleteIfExists(tmp);
            }
        }
    }

    private static void systemLoad(Path lib) {
        try {
            System.load(lib.toAbsolutePath().toString());
        } catch (UnsatisfiedLinkError e) {
            throw new UnsupportedOperationException("library failed to load: " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------- checked entry points

    private static void checkRange(int capacity, int off, int len) {
        Objects.checkFromIndexSize(off, len, capacity);
    }

    private static void checkBlocks(int capacity, int off, int stride, int len, int count, long[] out) {
        if (count < 0 || len < 0 || stride < 0 || off < 0) {
            throw new IndexOutOfBoundsException("negative argument: off=" + off + " stride=" + stride
                    + " len=" + len + " count=" + count);
        }
        if (out.length < count) {
            throw new IndexOutOfBoundsException("statesOut holds " + out.length + " < " + count);
        }
        if (count == 0) {
            return;
        }
        long last = off + (long) (count - 1) * stride;
        if (last + len > capacity) {
            throw new IndexOutOfBoundsException("blocks [" + off + ", " + (last + len) + ") outside [0, "
                    + capacity + ")");
        }
    }

    static long update(int alg, long state, byte[] b, int off, int len) {
        checkRange(b.length, off, len);
        return updateArray0(alg, state, b, off, len);
    }

    /** {@code b} must be direct; indexes are absolute and bounded by its limit. */
    static long updateDirect(int alg, long state, ByteBuffer b, int off, int len) {
        checkRange(b.limit(), off, len);
        long address = DirectAddress.of(b);
        if (address == 0) {
            return updateDirect0(alg, state, b, off, len);
        }
        try {
            return updateAddress0(alg, state, address + off, len);
        } finally {
            Reference.reachabilityFence(b); // the address does not keep the memory alive
        }
    }

    static void blocks(int alg, long state, byte[] b, int off, int stride, int len, int count, long[] out) {
        checkBlocks(b.length, off, stride, len, count, out);
        if (count > 0) {
            blocksArray0(alg, state, b, off, stride, len, count, out);
        }
    }

    static void blocksDirect(int alg, long state, ByteBuffer b, int off, int stride, int len, int count, long[] out) {
        checkBlocks(b.limit(), off, stride, len, count, out);
        if (count > 0) {
            blocksDirect0(alg, state, b, off, stride, len, count, out);
        }
    }

    // ---------------------------------------------------------------- run-level PI (pistore_native.c)

    static final int OP_GENERATE = 0;
    static final int OP_VERIFY = 1;
    /** Flags shared with pistore_native.c: checks, the Type 3 rules, and which buffers are direct. */
    static final int F_GUARD = 1;
    static final int F_APP = 2;
    static final int F_REF = 4;
    static final int F_TYPE3 = 8;
    private static final int F_D_DIRECT = 16;
    private static final int F_M_DIRECT = 32;

    /** Tuple bytes of each algorithm's format (CRC-16: 8; CRC-64 and CRC-32C: 16). */
    static int tupleSize(int alg) {
        return alg == ALG_CRC16 ? 8 : 16;
    }

    /**
     * One native call over a run of {@code count} whole blocks: generate (writes complete tuples;
     * returns {@code count}) or verify (returns the index of the first bad block, with kind,
     * expected and actual in {@code result[0..2]}, or {@code count} when all pass). Returns -1
     * when the buffers cannot be handled natively (a heap buffer without an accessible array, a
     * read-only metadata buffer for generate): the caller then runs the Java path. Every offset,
     * stride and length is checked here against each buffer's limit before C is reached.
     */
    static int run(int op, int alg, long s0, ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff,
                   int mStride, int count, int dataLen, int prefix, int tupleOff, int flags, int app, int appMask,
                   long ref0, long refMask, long[] result) {
        Objects.requireNonNull(d, "data buffer");
        Objects.requireNonNull(m, "metadata buffer");
        if (op != OP_GENERATE && op != OP_VERIFY || alg < ALG_CRC16 || alg > ALG_CRC32C) {
            throw new IllegalArgumentException("op " + op + " alg " + alg);
        }
        if (count < 1 || dataLen < 0 || prefix < 0 || tupleOff < 0 || dOff < 0 || mOff < 0 || dStride < 0
                || mStride < 0) {
            throw new IndexOutOfBoundsException("bad run: count=" + count + " dataLen=" + dataLen + " prefix="
                    + prefix + " tupleOff=" + tupleOff + " dOff=" + dOff + " dStride=" + dStride + " mOff=" + mOff
                    + " mStride=" + mStride);
        }
        if (op == OP_VERIFY && (result == null || result.length < 3)) {
            throw new IllegalArgumentException("verify needs a result array of 3");
        }
        long dEnd = dOff + (long) (count - 1) * dStride + dataLen;
        long mEnd = mOff + (long) (count - 1) * mStride + Math.max(prefix, (long) tupleOff + tupleSize(alg));
        if (dEnd > d.limit() || mEnd > m.limit()) {
            throw new IndexOutOfBoundsException("run outside its buffers: data [" + dOff + ", " + dEnd + ") of "
                    + d.limit() + ", metadata [" + mOff + ", " + mEnd + ") of " + m.limit());
        }
        if (op == OP_GENERATE && m.isReadOnly()) {
            return -1;
        }
        Object dObj;
        Object mObj;
        int f = flags & (F_GUARD | F_APP | F_REF | F_TYPE3);
        if (d.isDirect()) {
            dObj = d;
            f |= F_D_DIRECT;
        } else if (d.hasArray()) {
            dObj = d.array();
            dOff += d.arrayOffset();
        } else {
            return -1;
        }
        if (m.isDirect()) {
            mObj = m;
            f |= F_M_DIRECT;
        } else if (m.hasArray()) {
            mObj = m.array();
            mOff += m.arrayOffset();
        } else {
            return -1;
        }
        return run0(op, alg, s0, dObj, dOff, dStride, mObj, mOff, mStride, count, dataLen, prefix, tupleOff, f,
                app & 0xFFFF, appMask & 0xFFFF, ref0, refMask, result);
    }

    /** The CRC-64/NVME folding constants compiled into the library (see gen_crc64_constants.c). */
    static long[] crc64Constants() {
        ensureAvailability();
        return crc64Constants0();
    }

    /** The CRC-16/T10-DIF folding constants compiled into the library (see gen_crc16_constants.c). */
    static long[] crc16Constants() {
        ensureAvailability();
        return crc16Constants0();
    }

    /**
     * ISA-L's {@code crc16_t10dif} over {@code b[off, off + len)} from raw register {@code state}, or -1
     * when libisal is not loaded: a test oracle for our kernel, nothing binds it by default.
     */
    static long isalCrc16(int state, byte[] b, int off, int len) {
        ensureAvailability();
        checkRange(b.length, off, len);
        return crc16Isal0(state & 0xFFFF, b, off, len);
    }

    private static native int init0(int opts);

    private static native long[] crc16Constants0();

    private static native long crc16Isal0(int state, byte[] b, int off, int len);

    private static native int run0(int op, int alg, long s0, Object d, int dOff, int dStride, Object m, int mOff,
                                   int mStride, int count, int dataLen, int prefix, int tupleOff, int flags, int app,
                                   int appMask, long ref0, long refMask, long[] result);

    private static native String describe0();

    private static native long[] crc64Constants0();

    private static native long updateArray0(int alg, long state, byte[] b, int off, int len);

    private static native long updateDirect0(int alg, long state, ByteBuffer b, int off, int len);

    /** {@code len} bytes at native {@code address} (checked against its buffer by the caller). */
    private static native long updateAddress0(int alg, long state, long address, int len);

    private static native void blocksArray0(int alg, long state, byte[] b, int off, int stride, int len, int count,
                                            long[] out);

    private static native void blocksDirect0(int alg, long state, ByteBuffer b, int off, int stride, int len,
                                             int count, long[] out);
}
