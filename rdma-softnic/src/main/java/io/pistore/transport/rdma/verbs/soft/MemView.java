package io.pistore.transport.rdma.verbs.soft;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.Arrays;

/** What the soft NIC's DMA engine sees of a scatter list: its segments with their logical offsets. */
final class MemView {
    static final MemView EMPTY = new MemView(ScatterList.of());

    /** The list itself, for the integrity library's batched operations. */
    final ScatterList list;
    private final ByteBuffer[] segs;
    private final long[] starts;

    MemView(ScatterList list) {
        this.list = list;
        int n = list.segmentCount();
        segs = new ByteBuffer[n];
        starts = new long[n + 1];
        long off = 0;
        for (int i = 0; i < n; i++) {
            segs[i] = list.segment(i);
            starts[i] = off;
            off += segs[i].limit();
        }
        starts[n] = off;
    }

    long length() {
        return starts[segs.length];
    }

    private int segmentAt(long offset) {
        int i = Arrays.binarySearch(starts, 0, segs.length, offset);
        return i >= 0 ? i : -i - 2;
    }

    void read(long offset, byte[] dst, int pos, int len) {
        int i = segmentAt(offset);
        int local = (int) (offset - starts[i]);
        while (len > 0) {
            ByteBuffer s = segs[i];
            int n = Math.min(len, s.limit() - local);
            s.get(local, dst, pos, n);
            pos += n;
            len -= n;
            i++;
            local = 0;
        }
    }

    void write(long offset, byte[] src, int pos, int len) {
        int i = segmentAt(offset);
        int local = (int) (offset - starts[i]);
        while (len > 0) {
            ByteBuffer s = segs[i];
            int n = Math.min(len, s.limit() - local);
            s.put(local, src, pos, n);
            pos += n;
            len -= n;
            i++;
            local = 0;
        }
    }
}
