package io.pistore.integrity;

import java.nio.ByteBuffer;

/** Reads and writes the fields of a PI tuple at an absolute index of a big-endian buffer. */
final class Tuples {
    private Tuples() {
    }

    static long guard(GuardType g, ByteBuffer b, int at) {
        switch (g.guardSize()) {
            case 2: return b.getShort(at) & 0xFFFFL;
            case 4: return b.getInt(at) & 0xFFFFFFFFL;
            default: return b.getLong(at);
        }
    }

    static int app(GuardType g, ByteBuffer b, int at) {
        return b.getShort(at + g.appTagOffset()) & 0xFFFF;
    }

    static long ref(GuardType g, ByteBuffer b, int at) {
        int r = at + g.refTagOffset();
        switch (g.refTagSize()) {
            case 4: return b.getInt(r) & 0xFFFFFFFFL;
            case 8: return b.getLong(r);
            default: return ((b.getShort(r) & 0xFFFFL) << 32) | (b.getInt(r + 2) & 0xFFFFFFFFL);
        }
    }

    static void putGuard(GuardType g, ByteBuffer b, int at, long guard) {
        switch (g.guardSize()) {
            case 2: b.putShort(at, (short) guard); break;
            case 4: b.putInt(at, (int) guard); break;
            default: b.putLong(at, guard); break;
        }
    }

    static void putApp(GuardType g, ByteBuffer b, int at, int app) {
        b.putShort(at + g.appTagOffset(), (short) app);
    }

    static void putRef(GuardType g, ByteBuffer b, int at, long ref) {
        int r = at + g.refTagOffset();
        switch (g.refTagSize()) {
            case 4: b.putInt(r, (int) ref); break;
            case 8:
                b.putShort(r - 2, (short) 0); // bytes 6..7 of the 80-bit storage/ref space
                b.putLong(r, ref);
                break;
            default:
                b.putShort(r, (short) (ref >>> 32));
                b.putInt(r + 2, (int) ref);
                break;
        }
    }

    static void put(GuardType g, ByteBuffer b, int at, long guard, int app, long ref) {
        putGuard(g, b, at, guard);
        putApp(g, b, at, app);
        putRef(g, b, at, ref);
    }

    /** Whether this tuple disables all checks (Types 1/2: app 0xFFFF; Type 3: app 0xFFFF and ref all-ones). */
    static boolean escaped(BlockFormat f, int app, long ref) {
        if (app != 0xFFFF) {
            return false;
        }
        return f.type() != PiType.TYPE_3 || ref == f.guard().refTagMask();
    }
}
