package io.pistore.spi;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A compare-and-write that the volume orders with every write it takes, through any of its ports:
 * a replicated volume puts it in its Raft log and each replica compares and writes as it applies the
 * entry, so no write sent through another peer lands between the compare and the write. Reached like
 * {@link SharedVolumeState} (the volume, the target, the host connection); null where the volume has
 * one port, which holds the blocks itself while it compares (iSCSI's COMPARE AND WRITE then reads,
 * compares and writes under its own range lock).
 */
public interface OrderedCompareAndWrite {
    /** What the future holds when every block compared equal and the new ones were written. */
    long WRITTEN = -1;

    /**
     * Compares blocks {@code lba} to {@code lba + blocks - 1} with {@code verify} (their data) and,
     * when everything compared is equal, writes {@code data} and {@code metadata} (PI that passes the
     * volume's check) there. With {@code verifyMetadata} (one metadata entry per block; null: data
     * alone) each block's stored metadata is compared too, the bits {@code mask} (one entry's length)
     * sets: the PI fields a protect value compares. Block by block, data before metadata. Completes
     * with {@link #WRITTEN}, or with the offset of the first difference, nothing written: in
     * {@code verify}, or for the metadata of block {@code i} at byte {@code j},
     * {@code verify.length + i * metadataSize + j}; exceptionally with an {@link java.io.IOException}
     * when it could not be decided (no quorum, a stored copy that fails its check here, refused PI).
     * The arguments are copied before this returns. {@code fence}: null, or a fence whose
     * {@link WriteFence#view} the volume checks as it checks a write's.
     */
    CompletableFuture<Long> compareAndWrite(long lba, int blocks, byte[] verify, byte[] verifyMetadata, byte[] mask,
            ScatterList data, ScatterList metadata, boolean fua, WriteFence fence);

    /** The data-only compare-and-write: no metadata compared. */
    default CompletableFuture<Long> compareAndWrite(long lba, int blocks, byte[] verify, ScatterList data, ScatterList metadata,
            boolean fua, WriteFence fence) {
        return compareAndWrite(lba, blocks, verify, null, null, data, metadata, fua, fence);
    }

    /**
     * The offset of the first difference as {@link #compareAndWrite} reports it, or -1 where every
     * compared bit is equal: block by block ({@code dataSize} bytes of data each), the data of
     * {@code verify} against {@code stored}, then, where {@code verifyMetadata} is not null, the bits
     * {@code mask} sets of the block's metadata ({@code mask.length} bytes an entry) against
     * {@code storedMetadata}. Offsets count from each buffer's position; no position or limit changes.
     * The one comparison of both sides: the replicas that decide, a frontend that compares itself.
     */
    static long firstDifference(ByteBuffer verify, ByteBuffer stored, ByteBuffer verifyMetadata,
            ByteBuffer storedMetadata, byte[] mask, int dataSize) {
        if (verifyMetadata == null) {
            return stored.mismatch(verify);
        }
        int ms = mask.length;
        int n = verify.remaining() / dataSize;
        int v = verifyMetadata.position();
        int s = storedMetadata.position();
        for (int i = 0; i < n; i++) {
            int d = stored.slice(stored.position() + i * dataSize, dataSize)
                    .mismatch(verify.slice(verify.position() + i * dataSize, dataSize));
            if (d >= 0) {
                return (long) i * dataSize + d;
            }
            for (int j = 0; j < ms; j++) {
                if (((verifyMetadata.get(v + i * ms + j) ^ storedMetadata.get(s + i * ms + j)) & mask[j]) != 0) {
                    return (long) n * dataSize + (long) i * ms + j;
                }
            }
        }
        return -1;
    }
}
