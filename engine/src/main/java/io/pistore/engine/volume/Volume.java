package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import java.io.IOException;

/**
 * A volume's storage: fixed-size blocks of data, each with its metadata (the PI lives there) stored
 * beside it. The store never checks or repairs PI; the target service does the checking.
 *
 * <p>A block that was never written, written with zeroes or deallocated reads back as zero data
 * with the <b>unwritten metadata</b>: zero bytes except the PI tuple, whose guard is the guard of the
 * zero data, whose app tag is 0xFFFF and whose ref tag is all-ones. That tuple is an escape in every
 * PI type, so any reader's checks pass, and a scrub can tell an unwritten block from a written one
 * (see docs/FORMAT.md; the rule is {@link io.pistore.integrity.UnwrittenBlock}). Callers validate
 * ranges and buffer sizes first.
 */
public interface Volume extends AutoCloseable {
    String name();

    BlockFormat format();

    long blockCount();

    /** Reads blocks into {@code data} ({@code DATA} bytes each) and, if non-null, {@code metadata}. */
    void read(long lba, int blocks, ScatterList data, ScatterList metadata) throws IOException;

    /**
     * {@link #read} of a request received whole by {@code receivedNanos}
     * ({@link io.pistore.spi.BlockRequest#receivedNanos}, 0: unknown): a volume whose reads need a
     * confirmation from other machines (a replicated one) may use one that started after that time.
     * By default the plain read.
     */
    default void read(long lba, int blocks, ScatterList data, ScatterList metadata, long receivedNanos)
            throws IOException {
        read(lba, blocks, data, metadata);
    }

    /**
     * Reads the blocks' metadata alone into {@code metadata}, as {@link #read} would (the same
     * versions, under the same locks). By default a whole read into a scratch array; a volume that
     * keeps metadata apart reads only it.
     */
    default void readMetadata(long lba, int blocks, ScatterList metadata) throws IOException {
        read(lba, blocks, ScatterList.wrap(new byte[Math.multiplyExact(blocks, format().dataSize())]), metadata);
    }

    /**
     * Writes blocks; {@code metadata} is required when the format has metadata. With {@code fua} the
     * blocks are durable when this returns.
     */
    void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) throws IOException;

    /**
     * {@link #write} with the PI duty of the request it serves: which fields earlier hops on this path
     * checked (or that the PI was generated here), so a volume that checks writes itself (a replicated
     * one, before its group) checks only what no hop has. The plain {@link #write} means nothing was
     * checked (it is this write with {@link PiDuty#NONE}). A volume that does not check writes ignores
     * the duty; one that wraps another hands it on.
     */
    default void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua, PiDuty duty)
            throws IOException {
        write(lba, blocks, data, metadata, fua);
    }

    /** Makes the blocks read as unwritten. */
    void writeZeroes(long lba, int blocks, boolean fua) throws IOException;

    /** Makes everything written so far durable. */
    void flush() throws IOException;

    /**
     * Whether this volume's operations may wait on other machines (a replicated volume waits for a
     * quorum of its peers): the target service then runs them off the transport's I/O thread, so
     * that one request's wait does not hold up the others of its connection.
     */
    default boolean waitsForPeers() {
        return false;
    }

    /**
     * Whether {@link #flush} returns at once, with nothing to wait for: a replicated volume's writes
     * are durable in a quorum's logs before they complete. The target service then answers a flush
     * where it arrives, without a hand-off to a waiting thread.
     */
    default boolean flushReturnsAtOnce() {
        return false;
    }

    /**
     * Whether a read now may wait on other machines. A replicated volume whose peer leads, and has
     * just confirmed its lease, reads its own replica without waiting: the target service then runs
     * the read where it arrived, without a hand-off to a waiting thread.
     */
    default boolean readWaitsForPeers() {
        return waitsForPeers();
    }

    /**
     * How well this target serves the volume now ({@link io.pistore.spi.PathState}): a replicated
     * volume is optimized on the peer that leads its group, non-optimized where it is forwarded,
     * inaccessible without a leader. Asked often; must be cheap and must not block. By default optimized.
     */
    default io.pistore.spi.PathState pathState() {
        return io.pistore.spi.PathState.OPTIMIZED;
    }

    /**
     * Every peer that serves the volume with its path state as this peer sees them
     * ({@link io.pistore.spi.PathGroup}), or null for a volume served by this target alone (the
     * default). Asked a few times a second per volume by frontends that report it; must not block.
     */
    default io.pistore.spi.PathGroup pathGroup() {
        return null;
    }

    /**
     * Makes {@code replicaId}'s path the optimized one, its peer the leader of the volume's group,
     * waiting at most the operation timeout ({@link io.pistore.spi.HostConnection#optimizePath}: an
     * {@link IOException} when it did not take the lead, an {@link IllegalArgumentException} for a
     * peer outside the group). A volume served by this target alone has one path and refuses.
     */
    default void optimizePath(String replicaId) throws IOException {
        throw new UnsupportedOperationException("volume " + name() + " has one path");
    }

    /**
     * The state every port of this volume shares ({@link io.pistore.spi.SharedVolumeState}): a
     * replicated volume keeps it in its log, ordered with the writes. Null (the default) for a volume
     * served by this target alone, whose one port keeps such state itself.
     */
    default io.pistore.spi.SharedVolumeState sharedState() {
        return null;
    }

    /**
     * The compare-and-write this volume orders with every write of every port
     * ({@link io.pistore.spi.OrderedCompareAndWrite}): a replicated volume's log. Null (the default)
     * for a volume served by this target alone, whose one port holds the blocks while it compares.
     */
    default io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite() {
        return null;
    }

    /**
     * Whether {@link #writeAsync} completes later without a thread waiting for it (a replicated
     * volume: the commit by a quorum completes it). The target service then starts such writes where
     * they arrive and answers them when they complete, instead of handing each to a waiting thread.
     */
    default boolean writesAsync() {
        return false;
    }

    /**
     * Starts a write like {@link #write}; the future completes (normally, or with the
     * {@link IOException} that {@link #write} would have thrown) once it is done. The data and metadata
     * are copied or used up before this returns: the caller may reuse its buffers at once. This
     * default writes on the calling thread.
     */
    default java.util.concurrent.CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data,
            ScatterList metadata, boolean fua) {
        try {
            write(lba, blocks, data, metadata, fua);
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@link #writeAsync} with the PI duty of the request it serves, as
     * {@link #write(long, int, ScatterList, ScatterList, boolean, PiDuty)}; by default the plain one
     * (a volume that checks writes overrides both).
     */
    default java.util.concurrent.CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data,
            ScatterList metadata, boolean fua, PiDuty duty) {
        return writeAsync(lba, blocks, data, metadata, fua);
    }

    /**
     * {@link #writeAsync(long, int, ScatterList, ScatterList, boolean, PiDuty)} of a request its host
     * sent with {@code fence} (null: none; {@link io.pistore.spi.WriteFence}). A volume that can apply
     * a stale copy of a write after the host's newer one (a replicated volume: a peer that comes back
     * from a pause forwards what it held) completes a write whose fence is older than one it applied
     * with a {@link FencedWriteException}, writing nothing. By default the fence is not looked at:
     * a local volume applies a connection's requests as they arrive.
     */
    default java.util.concurrent.CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data,
            ScatterList metadata, boolean fua, PiDuty duty, io.pistore.spi.WriteFence fence) {
        return writeAsync(lba, blocks, data, metadata, fua, duty);
    }

    /** {@link #writeZeroes(long, int, boolean)} of a request sent with {@code fence}, as {@link #writeAsync} with one. */
    default void writeZeroes(long lba, int blocks, boolean fua, io.pistore.spi.WriteFence fence) throws IOException {
        writeZeroes(lba, blocks, fua);
    }

    @Override
    void close() throws IOException;
}
