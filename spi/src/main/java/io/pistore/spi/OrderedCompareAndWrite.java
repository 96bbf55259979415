package io.pistore.spi;

import io.pistore.integrity.ScatterList;
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
     * Compares blocks {@code lba} to {@code lba + blocks - 1} with {@code verify} (their data, nothing
     * else) and, when every byte is equal, writes {@code data} and {@code metadata} (PI that passes
     * the volume's check) there. Completes with {@link #WRITTEN}, or with the offset in {@code verify}
     * of the first byte that differs, nothing written; exceptionally with an {@link java.io.IOException}
     * when it could not be decided (no quorum, a stored copy that fails its check here, refused PI).
     * The arguments are copied before this returns. {@code fence}: null, or a fence whose
     * {@link WriteFence#view} the volume checks as it checks a write's.
     */
    CompletableFuture<Long> compareAndWrite(long lba, int blocks, byte[] verify, ScatterList data, ScatterList metadata,
            boolean fua, WriteFence fence);

    /**
     * As {@link #compareAndWrite(long, int, byte[], ScatterList, ScatterList, boolean, WriteFence)},
     * comparing each block's stored metadata too: {@code verifyMetadata} holds one metadata entry per
     * block, compared with the stored one where {@code mask} (one entry's length) has bits set (the
     * PI fields a protect value compares). Block by block, data before metadata; a difference in the
     * metadata of block {@code i} at byte {@code j} answers {@code verify.length + i * metadataSize + j}.
     * With {@code verifyMetadata} null it is the data-only call; a volume that cannot compare
     * metadata fails the future with an {@link UnsupportedOperationException}.
     */
    default CompletableFuture<Long> compareAndWrite(long lba, int blocks, byte[] verify, byte[] verifyMetadata, byte[] mask,
            ScatterList data, ScatterList metadata, boolean fua, WriteFence fence) {
        return verifyMetadata == null ? compareAndWrite(lba, blocks, verify, data, metadata, fua, fence)
                : CompletableFuture.failedFuture(new UnsupportedOperationException("this volume compares data alone"));
    }
}
