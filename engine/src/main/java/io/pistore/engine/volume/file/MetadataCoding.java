package io.pistore.engine.volume.file;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * How a volume's metadata file holds each block's metadata (docs/FORMAT.md, manifest versions):
 * since version 3, XOR the metadata of an unwritten block ({@link UnwrittenBlock#metadata}), so an
 * unwritten block's metadata is zeros in the file and a new or grown volume's metadata file is a
 * hole; version 2 held it as it is, and wrote the unwritten pattern over the whole file. The journal
 * always holds metadata as it is; the home files' writers encode and the readers decode. XOR is its
 * own inverse: {@link #apply} does both. A block's metadata starts at a multiple of its size in the
 * file, so byte {@code p} of the file is XORed with byte {@code p % size} of the pattern.
 */
final class MetadataCoding {
    private final byte[] pattern;
    /** The pattern as 8-byte words in big- and little-endian order, where its size is a multiple of 8. */
    private final long[] big;
    private final long[] little;

    private MetadataCoding(byte[] pattern) {
        this.pattern = pattern;
        if (pattern.length % 8 == 0) {
            big = new long[pattern.length / 8];
            little = new long[big.length];
            for (int i = 0; i < big.length; i++) {
                big[i] = ByteBuffer.wrap(pattern, 8 * i, 8).order(ByteOrder.BIG_ENDIAN).getLong();
                little[i] = Long.reverseBytes(big[i]);
            }
        } else {
            big = null;
            little = null;
        }
    }

    /**
     * The coding of a volume of {@code format}: null where the file holds metadata as it is (a
     * version-2 volume, {@code xor} false; a format without metadata; or one whose unwritten metadata
     * is all zeros already, as without PI).
     */
    static MetadataCoding of(BlockFormat format, boolean xor) {
        if (!xor || format.metadataSize() == 0) {
            return null;
        }
        byte[] p = UnwrittenBlock.metadata(format);
        for (byte b : p) {
            if (b != 0) {
                return new MetadataCoding(p);
            }
        }
        return null;
    }

    /** XORs {@code len} bytes of {@code b} from index {@code at}, which are (or go to) the file's bytes from {@code filePos}. */
    void apply(ByteBuffer b, int at, int len, long filePos) {
        int ms = pattern.length;
        int k = (int) (filePos % ms);
        int i = 0;
        if (big != null) {
            while (i < len && k != 0) { // up to the next block's start
                b.put(at + i, (byte) (b.get(at + i) ^ pattern[k]));
                i++;
                k = k + 1 == ms ? 0 : k + 1;
            }
            long[] words = b.order() == ByteOrder.BIG_ENDIAN ? big : little;
            for (int w = 0; i + 8 <= len; i += 8) {
                b.putLong(at + i, b.getLong(at + i) ^ words[w]);
                w = w + 1 == words.length ? 0 : w + 1;
                k = 8 * w;
            }
        }
        for (; i < len; i++) {
            b.put(at + i, (byte) (b.get(at + i) ^ pattern[k]));
            k = k + 1 == ms ? 0 : k + 1;
        }
    }

    /** {@link #apply} over {@code len} bytes of {@code list} from {@code off}, the file's bytes from {@code filePos}. */
    void apply(ScatterList list, long off, long len, long filePos) {
        ScatterList s = off == 0 && len == list.length() ? list : list.slice(off, len);
        long done = 0;
        for (int i = 0; i < s.segmentCount(); i++) {
            ByteBuffer seg = s.segment(i);
            apply(seg, 0, seg.limit(), filePos + done);
            done += seg.limit();
        }
    }

    /** A copy of {@code src}'s remaining bytes, encoded for file position {@code pos}, in this thread's scratch buffer. */
    ByteBuffer encoded(ByteBuffer src, long pos) {
        int n = src.remaining();
        ByteBuffer b = SCRATCH.get();
        if (b == null || b.capacity() < n) {
            b = ByteBuffer.allocateDirect(Math.max(n, 4096));
            SCRATCH.set(b);
        }
        b.clear().put(0, src, src.position(), n).limit(n);
        apply(b, 0, n, pos);
        return b;
    }

    /** Apart from {@link VolumeReader}'s: a write may encode while its thread's reads hold theirs. */
    private static final ThreadLocal<ByteBuffer> SCRATCH = new ThreadLocal<>();
}
