package io.pistore.app.cli;

import io.pistore.integrity.GuardType;
import io.pistore.integrity.reference.ReferenceGuards;

/**
 * PI written out by hand from the T10 / NVMe layouts with the bitwise reference guards, independent
 * of the library's tuple code: what {@code pi generate} must produce.
 */
final class HandWrittenPi {
    final int data;
    final int meta;
    final GuardType guard;
    final int type;
    final boolean last;
    final long ref0;
    final int app;

    HandWrittenPi(int data, int meta, GuardType guard, int type, boolean last, long ref0, int app) {
        this.data = data;
        this.meta = meta;
        this.guard = guard;
        this.type = type;
        this.last = last;
        this.ref0 = ref0;
        this.app = app;
    }

    int tupleSize() {
        return guard == GuardType.CRC16 || guard == GuardType.IP_CHECKSUM ? 8 : 16;
    }

    int guardBytes() {
        switch (guard) {
            case CRC32C: return 4;
            case CRC64: return 8;
            default: return 2;
        }
    }

    int appOffset() {
        return guardBytes();
    }

    int refOffset() {
        switch (guard) {
            case CRC32C: return 8;
            case CRC64: return 10;
            default: return 4;
        }
    }

    int refBytes() {
        switch (guard) {
            case CRC32C: return 8;
            case CRC64: return 6;
            default: return 4;
        }
    }

    /** Offset of the tuple inside a block's metadata. */
    int tupleOffset() {
        return last ? meta - tupleSize() : 0;
    }

    long refTag(long block) {
        if (type == 3) {
            return ref0;
        }
        long v = ref0 + block;
        return refBytes() == 8 ? v : v & ((1L << (8 * refBytes())) - 1);
    }

    /** The guard of a block: its data, and with PI last the metadata bytes before the tuple. */
    long guardOf(byte[] block, int off) {
        return ReferenceGuards.guard(guard, 0, block, off, data + tupleOffset());
    }

    /** The interleaved file for raw data. */
    byte[] interleaved(byte[] raw) {
        int n = raw.length / data;
        byte[] out = new byte[n * (data + meta)];
        for (int i = 0; i < n; i++) {
            int b = i * (data + meta);
            System.arraycopy(raw, i * data, out, b, data);
            if (type != 0) {
                int t = b + data + tupleOffset();
                put(out, t, guardBytes(), guardOf(out, b));
                put(out, t + appOffset(), 2, app);
                put(out, t + refOffset(), refBytes(), refTag(i));
            }
        }
        return out;
    }

    /** The separate metadata file for raw data. */
    byte[] metadata(byte[] raw) {
        byte[] il = interleaved(raw);
        int n = raw.length / data;
        byte[] out = new byte[n * meta];
        for (int i = 0; i < n; i++) {
            System.arraycopy(il, i * (data + meta) + data, out, i * meta, meta);
        }
        return out;
    }

    static void put(byte[] b, int off, int len, long v) {
        for (int k = len - 1; k >= 0; k--) {
            b[off + k] = (byte) v;
            v >>>= 8;
        }
    }

    static long get(byte[] b, int off, int len) {
        long v = 0;
        for (int k = 0; k < len; k++) {
            v = (v << 8) | (b[off + k] & 0xFF);
        }
        return v;
    }

    static String hex(long v, int bytes) {
        return String.format("0x%0" + (2 * bytes) + "x", v);
    }
}
