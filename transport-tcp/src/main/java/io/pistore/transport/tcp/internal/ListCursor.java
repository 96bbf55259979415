package io.pistore.transport.tcp.internal;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;

/** A read/write position in a scatter list that moves forward only; bulk copies to and from wire buffers. */
final class ListCursor {
    private final ByteBuffer[] segs;
    private int idx;
    private int off;

    ListCursor(ScatterList list) {
        segs = new ByteBuffer[list.segmentCount()];
        for (int i = 0; i < segs.length; i++) {
            segs[i] = list.segment(i);
        }
    }

    /**
     * A cursor over {@code [0, limit)} of one buffer the caller owns (the target's request buffers,
     * position 0): no views made. Absolute access only, so the buffer is never moved.
     */
    ListCursor(ByteBuffer one) {
        if (one.position() != 0) {
            throw new IllegalArgumentException("a single-buffer cursor needs position 0, not " + one.position());
        }
        segs = new ByteBuffer[] {one};
    }

    /** Copies {@code n} bytes of the list into {@code dst} at its position (advancing it). */
    void copyTo(ByteBuffer dst, int n) {
        while (n > 0) {
            ByteBuffer s = segs[idx];
            int k = Math.min(n, s.limit() - off);
            int p = dst.position();
            dst.put(p, s, off, k);
            dst.position(p + k);
            n -= k;
            advance(k);
        }
    }

    /** Copies {@code n} bytes of {@code src} from its position (advancing it) into the list. */
    void copyFrom(ByteBuffer src, int n) {
        while (n > 0) {
            ByteBuffer s = segs[idx];
            int k = Math.min(n, s.limit() - off);
            int p = src.position();
            s.put(off, src, p, k);
            src.position(p + k);
            n -= k;
            advance(k);
        }
    }

    private void advance(int k) {
        off += k;
        if (off == segs[idx].limit()) {
            idx++;
            off = 0;
        }
    }
}
