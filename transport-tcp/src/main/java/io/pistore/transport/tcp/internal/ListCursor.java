package io.pistore.transport.tcp.internal;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;

/**
 * A read/write position that moves forward only over a scatter list, or over {@code [0, limit)} of
 * one buffer the caller owns (the target's request buffers); bulk copies to and from wire buffers.
 * Re-aimed per transfer with {@link #reset}: one cursor serves a connection's transfers in turn, and
 * copies go through absolute indexes, so neither the lists' buffers nor this cursor allocate.
 */
final class ListCursor {
    private ScatterList list;
    private ByteBuffer one;
    private long off;

    /** Aims the cursor at the start of {@code l}. */
    ListCursor reset(ScatterList l) {
        list = l;
        one = null;
        off = 0;
        return this;
    }

    /** Aims the cursor at index 0 of {@code b}, up to its limit (position and limit are not changed). */
    ListCursor reset(ByteBuffer b) {
        list = null;
        one = b;
        off = 0;
        return this;
    }

    /** Copies {@code n} bytes of the list into {@code dst} at its position (advancing it). */
    void copyTo(ByteBuffer dst, int n) {
        int p = dst.position();
        if (one != null) {
            ScatterList.copy(one, (int) off, dst, p, n);
        } else {
            list.read(off, dst, p, n);
        }
        dst.position(p + n);
        off += n;
    }

    /** Copies {@code n} bytes of {@code src} from its position (advancing it) into the list. */
    void copyFrom(ByteBuffer src, int n) {
        int p = src.position();
        if (one != null) {
            ScatterList.copy(src, p, one, (int) off, n);
        } else {
            list.write(off, src, p, n);
        }
        src.position(p + n);
        off += n;
    }
}
