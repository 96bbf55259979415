package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

/**
 * Scatter lists for tests: a flat byte array cut into segments at chosen offsets, each segment in a
 * buffer of a chosen kind (heap, direct, read-only, with a non-zero position and guard bytes around
 * the window). {@link Built#bytes()} reads the logical content back; {@link Built#assertIntact()}
 * checks that no byte outside the windows was written and that no caller buffer was moved.
 */
final class TestLists {
    private TestLists() {
    }

    /** Buffer kinds. OFFSET kinds put the window at a non-zero position inside a larger buffer. */
    enum Kind {
        HEAP(false, false, false),
        HEAP_OFFSET(false, true, false),
        DIRECT(true, false, false),
        DIRECT_OFFSET(true, true, false),
        READ_ONLY_HEAP(false, true, true),
        READ_ONLY_DIRECT(true, true, true);

        final boolean direct;
        final boolean offset;
        final boolean readOnly;

        Kind(boolean direct, boolean offset, boolean readOnly) {
            this.direct = direct;
            this.offset = offset;
            this.readOnly = readOnly;
        }

        static Kind[] writable() {
            return new Kind[] {HEAP, HEAP_OFFSET, DIRECT, DIRECT_OFFSET};
        }
    }

    static final byte PAD = (byte) 0x5A;
    static final int PAD_LEN = 7;

    /** A list over {@code content} with segment boundaries at {@code cuts} (logical offsets, any order). */
    static Built split(byte[] content, Kind kind, int... cuts) {
        TreeSet<Integer> at = new TreeSet<>();
        for (int c : cuts) {
            if (c > 0 && c < content.length) {
                at.add(c);
            }
        }
        at.add(content.length);
        List<ByteBuffer> bufs = new ArrayList<>();
        List<ByteBuffer> backing = new ArrayList<>();
        int prev = 0;
        for (int end : at) {
            int len = end - prev;
            int pad = kind.offset ? PAD_LEN : 0;
            ByteBuffer b = kind.direct ? ByteBuffer.allocateDirect(len + 2 * pad) : ByteBuffer.allocate(len + 2 * pad);
            for (int i = 0; i < b.capacity(); i++) {
                b.put(i, PAD);
            }
            b.position(pad);
            b.put(content, prev, len);
            b.position(pad).limit(pad + len);
            backing.add(b);
            bufs.add(kind.readOnly ? b.asReadOnlyBuffer() : b);
            prev = end;
        }
        return new Built(ScatterList.of(bufs), backing, bufs, kind);
    }

    /** One segment. */
    static Built whole(byte[] content, Kind kind) {
        return split(content, kind);
    }

    /** Segments of the given lengths (the last one takes the rest). */
    static Built lengths(byte[] content, Kind kind, int... lens) {
        int[] cuts = new int[lens.length];
        int off = 0;
        for (int i = 0; i < lens.length; i++) {
            off += lens[i];
            cuts[i] = off;
        }
        return split(content, kind, cuts);
    }

    /** Random cut points (up to {@code maxCuts}), some of them at tiny distances. */
    static int[] randomCuts(Random r, int length, int maxCuts) {
        int n = r.nextInt(maxCuts + 1);
        int[] cuts = new int[n];
        for (int i = 0; i < n; i++) {
            cuts[i] = length <= 1 ? 0 : 1 + r.nextInt(length - 1);
        }
        return cuts;
    }

    /** A single heap segment (the plain case). */
    static ScatterList heap(byte[] content) {
        return ScatterList.wrap(content);
    }

    static final class Built {
        final ScatterList list;
        private final List<ByteBuffer> backing;
        private final List<ByteBuffer> handedOut;
        private final int[] positions;
        private final int[] limits;
        final Kind kind;

        Built(ScatterList list, List<ByteBuffer> backing, List<ByteBuffer> handedOut, Kind kind) {
            this.list = list;
            this.backing = backing;
            this.handedOut = handedOut;
            this.kind = kind;
            this.positions = handedOut.stream().mapToInt(ByteBuffer::position).toArray();
            this.limits = handedOut.stream().mapToInt(ByteBuffer::limit).toArray();
        }

        /** The logical content now. */
        byte[] bytes() {
            return list.toArray();
        }

        int segments() {
            return backing.size();
        }

        /** Pads untouched, positions and limits of the caller's buffers unchanged. */
        void assertIntact() {
            for (int i = 0; i < backing.size(); i++) {
                ByteBuffer b = backing.get(i).duplicate().clear();
                assertEquals(positions[i], handedOut.get(i).position(), "segment " + i + " position moved");
                assertEquals(limits[i], handedOut.get(i).limit(), "segment " + i + " limit moved");
                if (kind.offset) {
                    byte[] pad = new byte[PAD_LEN];
                    Arrays.fill(pad, PAD);
                    byte[] head = new byte[PAD_LEN];
                    byte[] tail = new byte[PAD_LEN];
                    b.get(0, head);
                    b.get(b.capacity() - PAD_LEN, tail);
                    assertArrayEquals(pad, head, "bytes before segment " + i + " written");
                    assertArrayEquals(pad, tail, "bytes after segment " + i + " written");
                }
            }
        }
    }
}
