package io.pistore.transport.rdma.internal;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;

/** Copies between scatter lists and contiguous buffers (staging and bounce buffers). */
final class Buffers {
    private Buffers() {
    }

    /** Copies all of {@code src} into {@code dst} at {@code at}. */
    static void gather(ScatterList src, ByteBuffer dst, int at) {
        int pos = at;
        for (int i = 0; i < src.segmentCount(); i++) {
            ByteBuffer s = src.segment(i);
            int n = s.remaining();
            dst.put(pos, s, 0, n);
            pos += n;
        }
    }

    /** Copies {@code dst.length()} bytes of {@code src} at {@code at} into the list. */
    static void scatter(ByteBuffer src, int at, ScatterList dst) {
        int pos = at;
        for (int i = 0; i < dst.segmentCount(); i++) {
            ByteBuffer d = dst.segment(i);
            int n = d.remaining();
            d.put(0, src, pos, n);
            pos += n;
        }
    }

    /** A contiguous copy of a list (one segment). */
    static ScatterList contiguous(ScatterList src, boolean copy) {
        ByteBuffer b = ByteBuffer.allocate((int) src.length());
        if (copy) {
            gather(src, b, 0);
        }
        return ScatterList.of(b);
    }
}
