package io.pistore.integrity;

import java.nio.ByteBuffer;

/** Segment-wise copies between scatter lists, used by insert and strip. */
final class Copier {
    private static final byte[] ZEROS = new byte[BlockFormat.MAX_METADATA_SIZE];

    private Copier() {
    }

    /** Copies {@code len} bytes from logical {@code srcOff} of {@code src} to {@code dstOff} of {@code dst}. */
    static void copy(ScatterList src, long srcOff, ScatterList dst, long dstOff, long len) {
        if (len == 0) {
            return;
        }
        int si = src.segmentAt(srcOff);
        int di = dst.segmentAt(dstOff);
        int sl = (int) (srcOff - src.start(si));
        int dl = (int) (dstOff - dst.start(di));
        while (len > 0) {
            ByteBuffer s = src.view(si);
            ByteBuffer d = dst.view(di);
            int n = (int) Math.min(len, Math.min(s.limit() - sl, d.limit() - dl));
            d.put(dl, s, sl, n);
            len -= n;
            sl += n;
            dl += n;
            if (sl == s.limit() && len > 0) {
                si++;
                sl = 0;
            }
            if (dl == d.limit() && len > 0) {
                di++;
                dl = 0;
            }
        }
    }

    /** Data-only blocks to interleaved blocks with zeroed metadata. */
    static void spread(ScatterList data, ScatterList out, int ds, int ms, long nblocks) {
        long bs = ds + ms;
        for (long i = 0; i < nblocks; i++) {
            copy(data, i * ds, out, i * bs, ds);
            if (ms > 0) {
                out.write(i * bs + ds, ZEROS, 0, ms);
            }
        }
    }

    /** Interleaved blocks to data-only blocks. */
    static void gather(ScatterList blocks, ScatterList out, int ds, int ms, long nblocks) {
        long bs = ds + ms;
        for (long i = 0; i < nblocks; i++) {
            copy(blocks, i * bs, out, i * ds, ds);
        }
    }
}
