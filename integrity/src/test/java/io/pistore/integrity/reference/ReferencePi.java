package io.pistore.integrity.reference;

import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain, obviously-correct reference implementation of the PI operations over flat arrays, one
 * block at a time, written from the spec semantics (pi-anchors.md sections 3.3-3.5 and 4.3-4.5) and
 * the javadoc of {@code Pi}, never by calling {@code Pi}. Guards come from {@link ReferenceGuards}.
 * The tuple layout is spelled out here again, independently of {@code GuardType}'s offsets:
 * <ul>
 *   <li>crc16 / ip (8 bytes): guard u16 @0, app u16 @2, ref u32 @4;
 *   <li>crc32c (16 bytes): guard u32 @0, app u16 @4, zero u16 @6, ref u64 @8;
 *   <li>crc64 (16 bytes): guard u64 @0, app u16 @8, ref u48 @10.
 * </ul>
 * All fields big-endian. Only {@link PiContext} and its format are used, as plain parameter holders.
 *
 * <p>Layouts: <b>interleaved</b> = one array, block i at {@code i * (DATA + META)}, its metadata right
 * after its data; <b>separate</b> = a data array ({@code DATA} per block) and a metadata array
 * ({@code META} per block).
 */
public final class ReferencePi {
    private ReferencePi() {
    }

    // ------------------------------------------------------------------ layout, written out

    /** Bytes of the PI tuple for a guard. */
    public static int tupleSize(GuardType g) {
        return g == GuardType.CRC16 || g == GuardType.IP_CHECKSUM ? 8 : 16;
    }

    public static int guardBytes(GuardType g) {
        switch (g) {
            case CRC16: case IP_CHECKSUM: return 2;
            case CRC32C: return 4;
            default: return 8;
        }
    }

    public static int appAt(GuardType g) {
        return guardBytes(g);
    }

    public static int refAt(GuardType g) {
        switch (g) {
            case CRC16: case IP_CHECKSUM: return 4;
            case CRC32C: return 8;
            default: return 10;
        }
    }

    public static int refBytes(GuardType g) {
        switch (g) {
            case CRC16: case IP_CHECKSUM: return 4;
            case CRC32C: return 8;
            default: return 6;
        }
    }

    /** All-ones at the reference tag's width (the Type 3 escape value). */
    public static long refAllOnes(GuardType g) {
        int bits = refBytes(g) * 8;
        return bits == 64 ? -1L : (1L << bits) - 1;
    }

    /** Offset of the tuple inside a block's metadata. */
    public static int tupleOffset(PiContext c) {
        int md = c.format().metadataSize();
        return c.format().location() == PiLocation.FIRST ? 0 : md - tupleSize(c.format().guard());
    }

    /** The reference tag block {@code i} must carry. */
    public static long expectedRef(PiContext c, long initial, long i) {
        if (c.format().type() == PiType.TYPE_3) {
            return initial;
        }
        long mask = refAllOnes(c.format().guard());
        return (initial + i) & mask;
    }

    public static long getBe(byte[] b, int at, int n) {
        long v = 0;
        for (int k = 0; k < n; k++) {
            v = (v << 8) | (b[at + k] & 0xFF);
        }
        return v;
    }

    public static void putBe(byte[] b, int at, int n, long v) {
        for (int k = n - 1; k >= 0; k--) {
            b[at + k] = (byte) v;
            v >>>= 8;
        }
    }

    // ------------------------------------------------------------------ one block

    /** The guard of one block: its data, then the metadata bytes before the tuple (PI last). */
    public static long guardOf(PiContext c, byte[] data, int dataAt, byte[] md, int mdAt) {
        int ds = c.format().dataSize();
        int prefix = tupleOffset(c);
        byte[] covered = new byte[ds + prefix];
        System.arraycopy(data, dataAt, covered, 0, ds);
        System.arraycopy(md, mdAt, covered, ds, prefix);
        return ReferenceGuards.guard(c.format().guard(), c.guardSeed(), covered, 0, covered.length);
    }

    private static void generateBlock(PiContext c, byte[] data, int dataAt, byte[] md, int mdAt, long i) {
        GuardType g = c.format().guard();
        int t = mdAt + tupleOffset(c);
        putBe(md, t, guardBytes(g), guardOf(c, data, dataAt, md, mdAt));
        putBe(md, t + appAt(g), 2, c.appTag());
        writeRef(g, md, t, expectedRef(c, c.initialRefTag(), i));
    }

    private static void writeRef(GuardType g, byte[] md, int t, long ref) {
        if (g == GuardType.CRC32C) {
            putBe(md, t + 6, 2, 0);
        }
        putBe(md, t + refAt(g), refBytes(g), ref);
    }

    private static boolean escaped(PiContext c, int app, long ref) {
        if (app != 0xFFFF) {
            return false;
        }
        if (c.format().type() == PiType.TYPE_3) {
            return ref == refAllOnes(c.format().guard());
        }
        return true;
    }

    private static PiError verifyBlock(PiContext c, byte[] data, int dataAt, byte[] md, int mdAt, long i) {
        GuardType g = c.format().guard();
        int t = mdAt + tupleOffset(c);
        int app = (int) getBe(md, t + appAt(g), 2);
        long ref = getBe(md, t + refAt(g), refBytes(g));
        if (escaped(c, app, ref)) {
            return null;
        }
        if (c.checks().guard()) {
            long stored = getBe(md, t, guardBytes(g));
            long computed = guardOf(c, data, dataAt, md, mdAt);
            if (stored != computed) {
                return new PiError(PiErrorKind.GUARD, i, computed, stored);
            }
        }
        if (c.checks().app()) {
            int mask = c.appMask();
            if ((app & mask) != (c.appTag() & mask)) {
                return new PiError(PiErrorKind.APP_TAG, i, c.appTag() & mask, app & mask);
            }
        }
        if (c.checks().ref() && c.format().type() != PiType.TYPE_3) {
            long want = expectedRef(c, c.initialRefTag(), i);
            if (ref != want) {
                return new PiError(PiErrorKind.REF_TAG, i, want, ref);
            }
        }
        return null;
    }

    private static boolean on(PiContext c) {
        return c.format().type() != PiType.TYPE_0;
    }

    private static int bs(PiContext c) {
        return c.format().dataSize() + c.format().metadataSize();
    }

    // ------------------------------------------------------------------ interleaved

    /** Generates the tuples of {@code n} interleaved blocks in place; other metadata bytes stay. */
    public static void generate(PiContext c, byte[] blocks, int n) {
        if (!on(c)) {
            return;
        }
        int ds = c.format().dataSize();
        for (int i = 0; i < n; i++) {
            generateBlock(c, blocks, i * bs(c), blocks, i * bs(c) + ds, i);
        }
    }

    /** All errors (one per failing block, at most {@code max}), in block order. */
    public static List<PiError> verifyAll(PiContext c, byte[] blocks, int n, int max) {
        List<PiError> out = new ArrayList<>();
        if (!on(c)) {
            return out;
        }
        int ds = c.format().dataSize();
        for (int i = 0; i < n && out.size() < max; i++) {
            PiError e = verifyBlock(c, blocks, i * bs(c), blocks, i * bs(c) + ds, i);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }

    /** The first error, or null. */
    public static PiError verify(PiContext c, byte[] blocks, int n) {
        List<PiError> e = verifyAll(c, blocks, n, 1);
        return e.isEmpty() ? null : e.get(0);
    }

    /** Data-only blocks to new interleaved blocks: metadata zero except the generated tuple. */
    public static byte[] insert(PiContext c, byte[] data, int n) {
        int ds = c.format().dataSize();
        byte[] out = new byte[n * bs(c)];
        for (int i = 0; i < n; i++) {
            System.arraycopy(data, i * ds, out, i * bs(c), ds);
        }
        generate(c, out, n);
        return out;
    }

    /** Verifies; only when every block passes, copies the data of each block to {@code out}. */
    public static PiError strip(PiContext c, byte[] blocks, byte[] out, int n) {
        PiError e = verify(c, blocks, n);
        if (e != null) {
            return e;
        }
        int ds = c.format().dataSize();
        for (int i = 0; i < n; i++) {
            System.arraycopy(blocks, i * bs(c), out, i * ds, ds);
        }
        return null;
    }

    /** Rewrites ref tags to start at {@code newInitial}; skips escaped blocks; checkOld stops at a bad old tag. */
    public static PiError remap(PiContext c, byte[] blocks, int n, long newInitial, boolean checkOld) {
        int ds = c.format().dataSize();
        return remapMd(c, blocks, ds, bs(c), n, newInitial, checkOld);
    }

    // ------------------------------------------------------------------ separate

    public static void generate(PiContext c, byte[] data, byte[] md, int n) {
        if (!on(c)) {
            return;
        }
        int ds = c.format().dataSize();
        int ms = c.format().metadataSize();
        for (int i = 0; i < n; i++) {
            generateBlock(c, data, i * ds, md, i * ms, i);
        }
    }

    public static List<PiError> verifyAll(PiContext c, byte[] data, byte[] md, int n, int max) {
        List<PiError> out = new ArrayList<>();
        if (!on(c)) {
            return out;
        }
        int ds = c.format().dataSize();
        int ms = c.format().metadataSize();
        for (int i = 0; i < n && out.size() < max; i++) {
            PiError e = verifyBlock(c, data, i * ds, md, i * ms, i);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }

    public static PiError verify(PiContext c, byte[] data, byte[] md, int n) {
        List<PiError> e = verifyAll(c, data, md, n, 1);
        return e.isEmpty() ? null : e.get(0);
    }

    public static PiError remapSeparate(PiContext c, byte[] md, int n, long newInitial, boolean checkOld) {
        return remapMd(c, md, 0, c.format().metadataSize(), n, newInitial, checkOld);
    }

    private static PiError remapMd(PiContext c, byte[] buf, int first, int stride, int n, long newInitial,
                                   boolean checkOld) {
        if (!on(c)) {
            return null;
        }
        GuardType g = c.format().guard();
        boolean type3 = c.format().type() == PiType.TYPE_3;
        for (int i = 0; i < n; i++) {
            int t = first + i * stride + tupleOffset(c);
            int app = (int) getBe(buf, t + appAt(g), 2);
            long ref = getBe(buf, t + refAt(g), refBytes(g));
            if (escaped(c, app, ref)) {
                continue;
            }
            if (checkOld && !type3) {
                long want = expectedRef(c, c.initialRefTag(), i);
                if (ref != want) {
                    return new PiError(PiErrorKind.REF_TAG, i, want, ref);
                }
            }
            writeRef(g, buf, t, expectedRef(c, newInitial, i));
        }
        return null;
    }

    // ------------------------------------------------------------------ small helpers for tests

    /** The interleaved array of separate data and metadata. */
    public static byte[] interleave(PiContext c, byte[] data, byte[] md, int n) {
        int ds = c.format().dataSize();
        int ms = c.format().metadataSize();
        byte[] out = new byte[n * (ds + ms)];
        for (int i = 0; i < n; i++) {
            System.arraycopy(data, i * ds, out, i * (ds + ms), ds);
            System.arraycopy(md, i * ms, out, i * (ds + ms) + ds, ms);
        }
        return out;
    }

    /** The tuple bytes of block {@code i} of an interleaved array. */
    public static byte[] tupleOf(PiContext c, byte[] blocks, int i) {
        int at = i * bs(c) + c.format().dataSize() + tupleOffset(c);
        return Arrays.copyOfRange(blocks, at, at + tupleSize(c.format().guard()));
    }
}
