package io.pistore.integrity;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * An immutable sequence of byte ranges, each the {@code [position, limit)} window of a
 * {@link ByteBuffer} (heap or direct) at the time the list is made. Segment boundaries are arbitrary:
 * one may cut through a block, its metadata, its PI tuple or a single field. Operations read and
 * write through the list with absolute indexes and never move the callers' buffers.
 */
public final class ScatterList {
    private static final ScatterList EMPTY = new ScatterList(new ByteBuffer[0]);
    /** Copies shorter than this go byte by byte (see {@link #copy}). */
    private static final int SMALL_COPY = 32;
    /** Zeros that {@link #isZero} compares runs with; never written, so shared by every thread. */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(4096).asReadOnlyBuffer();
    /** Runs shorter than this are checked word by word (a compare's two views cost more). */
    private static final int ZERO_COMPARE_MIN = 64;

    /** Big-endian views, position 0, limit = segment length. */
    private final ByteBuffer[] segments;
    /** starts[i] = logical offset of segment i; starts[n] = total length. */
    private final long[] starts;

    private ScatterList(ByteBuffer[] views) {
        this.segments = views;
        this.starts = new long[views.length + 1];
        long off = 0;
        for (int i = 0; i < views.length; i++) {
            starts[i] = off;
            off += views[i].limit();
        }
        starts[views.length] = off;
    }

    /** A list over the remaining bytes of each buffer, in order. Empty buffers are skipped. */
    public static ScatterList of(ByteBuffer... buffers) {
        int n = 0;
        ByteBuffer[] views = new ByteBuffer[buffers.length];
        for (ByteBuffer b : buffers) {
            if (b.remaining() > 0) {
                views[n++] = b.slice().order(ByteOrder.BIG_ENDIAN);
            }
        }
        return n == 0 ? EMPTY : new ScatterList(Arrays.copyOf(views, n));
    }

    public static ScatterList of(List<ByteBuffer> buffers) {
        return of(buffers.toArray(new ByteBuffer[0]));
    }

    /** A single heap segment over the whole array. */
    public static ScatterList wrap(byte[] array) {
        return of(ByteBuffer.wrap(array));
    }

    /** Total bytes. */
    public long length() {
        return starts[segments.length];
    }

    public int segmentCount() {
        return segments.length;
    }

    /** A fresh big-endian view of segment {@code i} (position 0); writes go to the caller's memory. */
    public ByteBuffer segment(int i) {
        return segments[i].duplicate().order(ByteOrder.BIG_ENDIAN);
    }

    /** The bytes {@code [offset, offset + len)} of this list as a new list sharing the memory. */
    public ScatterList slice(long offset, long len) {
        if (offset < 0 || len < 0 || offset + len > length()) {
            throw new IndexOutOfBoundsException("slice [" + offset + ", " + (offset + len) + ") of a list of "
                    + length() + " bytes");
        }
        if (len == 0) {
            return EMPTY;
        }
        int first = segmentAt(offset);
        int last = segmentAt(offset + len - 1);
        ByteBuffer[] views = new ByteBuffer[last - first + 1];
        for (int i = first; i <= last; i++) {
            long s = Math.max(offset, starts[i]) - starts[i];
            long e = Math.min(offset + len, starts[i + 1]) - starts[i];
            ByteBuffer d = segments[i].duplicate();
            d.limit((int) e).position((int) s);
            views[i - first] = d.slice().order(ByteOrder.BIG_ENDIAN);
        }
        return new ScatterList(views);
    }

    /** Index of the segment that holds byte {@code offset} (0 <= offset < length). */
    int segmentAt(long offset) {
        int i = Arrays.binarySearch(starts, 0, segments.length, offset);
        return i >= 0 ? i : -i - 2;
    }

    ByteBuffer view(int i) {
        return segments[i];
    }

    long start(int i) {
        return starts[i];
    }

    int segmentLength(int i) {
        return segments[i].limit();
    }

    /**
     * Copies {@code len} bytes at logical {@code offset} into {@code dst[dstOff..]}, without allocating.
     *
     * @throws IndexOutOfBoundsException if either range is outside its list or array
     */
    public void read(long offset, byte[] dst, int dstOff, int len) {
        transfer(offset, dst, dstOff, len, true);
    }

    /**
     * Copies {@code len} bytes of {@code src[srcOff..]} to logical {@code offset}, without allocating.
     *
     * @throws IndexOutOfBoundsException if either range is outside its list or array
     * @throws java.nio.ReadOnlyBufferException if a segment written to is read-only
     */
    public void write(long offset, byte[] src, int srcOff, int len) {
        transfer(offset, src, srcOff, len, false);
    }

    /**
     * Copies between {@code [offset, offset + len)} of the list and {@code other[index..]}: out of the
     * list, or into it. The array twin of the buffer walk below (wrapping the array instead would
     * allocate on the memory volume's hot path).
     */
    private void transfer(long offset, byte[] other, int index, int len, boolean out) {
        checkRange(offset, len);
        java.util.Objects.checkFromIndexSize(index, len, other.length);
        if (len == 0) {
            return;
        }
        int i = segmentAt(offset);
        int local = (int) (offset - starts[i]);
        while (len > 0) {
            ByteBuffer s = segments[i];
            int n = Math.min(len, s.limit() - local);
            if (out) {
                s.get(local, other, index, n);
            } else {
                s.put(local, other, index, n);
            }
            index += n;
            len -= n;
            i++;
            local = 0;
        }
    }

    /**
     * Copies {@code len} bytes at logical {@code offset} into {@code dst} at absolute index
     * {@code dstIndex} (its position and limit are not changed), without allocating.
     *
     * @throws IndexOutOfBoundsException if either range is outside its list or buffer
     */
    public void read(long offset, ByteBuffer dst, int dstIndex, int len) {
        transfer(offset, dst, dstIndex, len, true);
    }

    /**
     * Copies {@code len} bytes of {@code src} from absolute index {@code srcIndex} (its position and
     * limit are not changed) to logical {@code offset}, without allocating.
     *
     * @throws IndexOutOfBoundsException if either range is outside its list or buffer
     * @throws java.nio.ReadOnlyBufferException if a segment written to is read-only
     */
    public void write(long offset, ByteBuffer src, int srcIndex, int len) {
        transfer(offset, src, srcIndex, len, false);
    }

    /** Copies between {@code [offset, offset + len)} of the list and {@code other} from {@code index}: out of the list, or into it. */
    private void transfer(long offset, ByteBuffer other, int index, int len, boolean out) {
        checkRange(offset, len);
        java.util.Objects.checkFromIndexSize(index, len, other.limit());
        if (len == 0) {
            return;
        }
        int i = segmentAt(offset);
        int local = (int) (offset - starts[i]);
        while (len > 0) {
            ByteBuffer s = segments[i];
            int n = Math.min(len, s.limit() - local);
            if (out) {
                copy(s, local, other, index, n);
            } else {
                copy(other, index, s, local, n);
            }
            index += n;
            len -= n;
            i++;
            local = 0;
        }
    }

    /**
     * Copies {@code n} bytes between two buffers by absolute index. Copies shorter than
     * {@link #SMALL_COPY} (a block's metadata, a PI tuple) go byte by byte: a bulk buffer-to-buffer
     * copy costs tens of nanoseconds to set up, more than 8 bytes by hand; whole 8-byte words go as
     * longs (one bounds check each instead of eight) when both buffers have the same byte order.
     */
    public static void copy(ByteBuffer from, int fromIndex, ByteBuffer to, int toIndex, int n) {
        if (n < SMALL_COPY && (n & 7) == 0 && from.order() == to.order()) {
            for (int j = 0; j < n; j += 8) {
                to.putLong(toIndex + j, from.getLong(fromIndex + j));
            }
        } else if (n < SMALL_COPY) {
            for (int j = 0; j < n; j++) {
                to.put(toIndex + j, from.get(fromIndex + j));
            }
        } else {
            to.put(toIndex, from, fromIndex, n);
        }
    }

    /** Whether any segment is read-only (without allocating views). */
    public boolean isReadOnly() {
        for (ByteBuffer s : segments) {
            if (s.isReadOnly()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the {@code len} bytes at logical {@code offset} equal {@code expected[off..off+len)}
     * (without allocating).
     *
     * @throws IndexOutOfBoundsException if either range is outside its list or array
     */
    public boolean contentEquals(long offset, byte[] expected, int off, int len) {
        checkRange(offset, len);
        java.util.Objects.checkFromIndexSize(off, len, expected.length);
        if (len == 0) {
            return true;
        }
        int i = segmentAt(offset);
        int local = (int) (offset - starts[i]);
        while (len > 0) {
            ByteBuffer s = segments[i];
            int n = Math.min(len, s.limit() - local);
            for (int k = 0; k < n; k++) {
                if (s.get(local + k) != expected[off + k]) {
                    return false;
                }
            }
            off += n;
            len -= n;
            i++;
            local = 0;
        }
        return true;
    }

    /**
     * Whether the {@code len} bytes at logical {@code offset} are all zero (without allocating).
     *
     * @throws IndexOutOfBoundsException if the range is outside the list
     */
    public boolean isZero(long offset, long len) {
        checkRange(offset, len);
        if (len == 0) {
            return true;
        }
        int i = segmentAt(offset);
        int local = (int) (offset - starts[i]);
        while (len > 0) {
            ByteBuffer s = segments[i];
            int n = (int) Math.min(len, s.limit() - local);
            if (!isZero(s, local, n)) {
                return false;
            }
            len -= n;
            i++;
            local = 0;
        }
        return true;
    }

    /**
     * Whether {@code n} bytes of {@code s} from {@code at} are zero: compared with {@link #ZEROS} a
     * chunk at a time ({@code mismatch} is vectorized), short runs word by word.
     */
    private static boolean isZero(ByteBuffer s, int at, int n) {
        if (n < ZERO_COMPARE_MIN) {
            int k = 0;
            for (; k + 8 <= n; k += 8) {
                if (s.getLong(at + k) != 0) {
                    return false;
                }
            }
            for (; k < n; k++) {
                if (s.get(at + k) != 0) {
                    return false;
                }
            }
            return true;
        }
        for (int k = 0; k < n; ) {
            int c = Math.min(n - k, ZEROS.capacity());
            if (s.slice(at + k, c).mismatch(ZEROS.slice(0, c)) >= 0) {
                return false;
            }
            k += c;
        }
        return true;
    }

    private void checkRange(long offset, long len) {
        if (offset < 0 || len < 0 || offset + len > length()) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + (offset + len) + ") of a list of "
                    + length() + " bytes");
        }
    }

    /** Copies all bytes into a new array (tests, tools and small lists only). */
    public byte[] toArray() {
        long n = length();
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("scatter list of " + n + " bytes does not fit an array");
        }
        byte[] a = new byte[(int) n];
        if (n > 0) {
            read(0, a, 0, (int) n);
        }
        return a;
    }

    @Override
    public String toString() {
        return "ScatterList{" + segments.length + " segments, " + length() + " bytes}";
    }
}
