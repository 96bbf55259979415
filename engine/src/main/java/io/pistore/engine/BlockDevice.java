package io.pistore.engine;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The host-side view of one volume over a {@link HostConnection}. Two ways to write and read:
 * <ul>
 *   <li><b>data only</b> ({@link #write(long, ScatterList)}, {@link #read(long, ScatterList)}): the
 *       caller has no PI in memory; it is inserted on the way out and checked and stripped on the
 *       way in (PRACT=1), with the LBA as the initial reference tag;
 *   <li><b>data and metadata</b>: the caller's own PI travels and is checked at each hop as the
 *       {@link Protection} says (PRACT=0).
 * </ul>
 * Asynchronous methods spread requests over the connection's queues; the sync helpers wait and
 * throw {@link BlockIoException} on failure, retrying while a queue is full. Thread-safe.
 */
public final class BlockDevice {
    private final HostConnection connection;
    private final VolumeInfo info;
    private final AtomicInteger next = new AtomicInteger();

    private BlockDevice(HostConnection connection, VolumeInfo info) {
        this.connection = connection;
        this.info = info;
    }

    /** The device for volume {@code name} of the connection's target. */
    public static BlockDevice open(HostConnection connection, String name) {
        for (VolumeInfo v : connection.volumes()) {
            if (v.name().equals(name)) {
                return new BlockDevice(connection, v);
            }
        }
        throw new IllegalArgumentException("the target has no volume named '" + name + "'");
    }

    public VolumeInfo info() {
        return info;
    }

    public BlockFormat format() {
        return info.format();
    }

    public HostConnection connection() {
        return connection;
    }

    /** PRACT=1 protection for a request at {@code lba}: all checks, ref tag from the LBA, app tag unchecked. */
    public Protection insertStrip(long lba) {
        return Protection.insertStrip(info.format(), lba);
    }

    private int blocksOf(ScatterList data) {
        long ds = info.format().dataSize();
        if (data.length() % ds != 0) {
            throw new IllegalArgumentException("data of " + data.length() + " bytes is not a whole number of "
                    + ds + "-byte blocks");
        }
        return (int) (data.length() / ds);
    }

    /** Submits on the next queue, round robin. */
    public CompletableFuture<Completion> submit(BlockRequest r) {
        int q = Math.floorMod(next.getAndIncrement(), connection.queueCount());
        return connection.queue(q).submit(r);
    }

    /**
     * Submits on the next queue, round robin, and calls {@code done} with the completion, possibly
     * on this thread before returning: see {@link io.pistore.spi.HostQueue#submitMayCompleteOnCaller}
     * (a request submitted from inside a {@code done} running on the caller's stack is queued, not
     * run inline again, so chaining from {@code done} nests at most one level).
     */
    public void submitMayCompleteOnCaller(BlockRequest r, java.util.function.Consumer<Completion> done) {
        int q = Math.floorMod(next.getAndIncrement(), connection.queueCount());
        connection.queue(q).submitMayCompleteOnCaller(r, done);
    }

    /** Submits on a chosen queue. */
    public CompletableFuture<Completion> submit(int queue, BlockRequest r) {
        return connection.queue(queue).submit(r);
    }

    public CompletableFuture<Completion> write(long lba, ScatterList data) {
        return submit(BlockRequest.write(info.name(), lba, blocksOf(data), data, null, insertStrip(lba), false));
    }

    public CompletableFuture<Completion> write(long lba, ScatterList data, ScatterList metadata, Protection p,
                                               boolean fua) {
        return submit(BlockRequest.write(info.name(), lba, blocksOf(data), data, metadata, p, fua));
    }

    public CompletableFuture<Completion> read(long lba, ScatterList data) {
        return submit(BlockRequest.read(info.name(), lba, blocksOf(data), data, null, insertStrip(lba)));
    }

    public CompletableFuture<Completion> read(long lba, ScatterList data, ScatterList metadata, Protection p) {
        return submit(BlockRequest.read(info.name(), lba, blocksOf(data), data, metadata, p));
    }

    public CompletableFuture<Completion> flush() {
        return submit(BlockRequest.flush(info.name()));
    }

    public CompletableFuture<Completion> writeZeroes(long lba, int blocks) {
        return submit(BlockRequest.writeZeroes(info.name(), lba, blocks, false));
    }

    public CompletableFuture<Completion> deallocate(long lba, int blocks) {
        return submit(BlockRequest.deallocate(info.name(), lba, blocks));
    }

    // ------------------------------------------------------------------ allocation

    /**
     * Which of {@code blocks} blocks from {@code lba} are <b>unwritten</b>: never written, written
     * with zeroes or deallocated, so that they read as zeros (docs/FORMAT.md). Bit {@code i} of the
     * result stands for block {@code lba + i}. Works over every transport: one read of data and
     * metadata without PI checks (PRACT=0), whose metadata is compared with the unwritten pattern;
     * the target refuses such a read when a block with the pattern holds anything but zeros, so a
     * reported block really reads as zeros. Formats without PI cannot tell: every block is reported
     * written, without I/O. {@code blocks} must fit one transfer. Fails with a
     * {@link BlockIoException} carrying the completion.
     */
    public CompletableFuture<java.util.BitSet> unwrittenBlocks(long lba, int blocks) {
        return unwrittenBlocks(lba, blocks, this::submit);
    }

    /** {@link #unwrittenBlocks(long, int)}, its read submitted by {@code submitter}. */
    public CompletableFuture<java.util.BitSet> unwrittenBlocks(long lba, int blocks,
            java.util.function.Function<BlockRequest, CompletableFuture<Completion>> submitter) {
        return unwrittenBlocks(lba, blocks, submitter, null);
    }

    /**
     * {@link #unwrittenBlocks(long, int, java.util.function.Function)} with the blocks' data read into
     * {@code dataScratch} (from its position; null: a new array), which the caller keeps until the
     * answer completes: a pooled direct buffer spares a zeroed array and the copy through the JDK's
     * temporary direct buffer.
     * <p>
     * Where the connection serves metadata-only reads ({@link HostConnection#readsMetadataOnly}: in
     * one process, or over tcp), the metadata is read first and only the blocks whose metadata is the unwritten
     * pattern are then read whole, so that the target checks their data is zeros; the answer for those
     * is taken from that second read (a write between the two makes a block written). Written blocks'
     * data is never read.
     */
    public CompletableFuture<java.util.BitSet> unwrittenBlocks(long lba, int blocks,
            java.util.function.Function<BlockRequest, CompletableFuture<Completion>> submitter,
            ByteBuffer dataScratch) {
        BlockFormat f = info.format();
        if (!f.hasPi()) {
            return CompletableFuture.completedFuture(new java.util.BitSet());
        }
        if (blocks < 1) {
            throw new IllegalArgumentException("block count must be at least 1, not " + blocks);
        }
        int dataLen = blocks * f.dataSize();
        if (dataScratch != null && dataScratch.remaining() < dataLen) {
            throw new IllegalArgumentException("the scratch holds " + dataScratch.remaining() + " bytes, "
                    + blocks + " blocks need " + dataLen);
        }
        ByteBuffer data = dataScratch == null ? null : dataScratch.slice(dataScratch.position(), dataLen);
        if (!connection.readsMetadataOnly()) {
            return wholeRead(lba, 0, blocks, submitter, data);
        }
        byte[] meta = new byte[blocks * f.metadataSize()];
        return submitter.apply(BlockRequest.readMetadata(info.name(), lba, blocks, ScatterList.wrap(meta)))
                .thenCompose(c -> {
                    if (!c.isSuccess()) {
                        throw new java.util.concurrent.CompletionException(new BlockIoException(c));
                    }
                    java.util.BitSet candidates = unwrittenIn(f, meta, blocks);
                    int from = candidates.nextSetBit(0);
                    if (from < 0) {
                        return CompletableFuture.completedFuture(candidates);
                    }
                    int to = candidates.previousSetBit(blocks - 1) + 1; // one read from the first candidate to the last
                    ByteBuffer d = data == null ? null
                            : data.slice(from * f.dataSize(), (to - from) * f.dataSize());
                    return wholeRead(lba, from, to - from, submitter, d).thenApply(checked -> {
                        java.util.BitSet unwritten = new java.util.BitSet(blocks);
                        for (int i = checked.nextSetBit(0); i >= 0; i = checked.nextSetBit(i + 1)) {
                            unwritten.set(from + i);
                        }
                        return unwritten;
                    });
                });
    }

    /**
     * Blocks {@code lba+from .. +n} read whole (data and metadata, PI not checked; the target still
     * refuses a block with the unwritten pattern whose data is not zeros): which of them are unwritten.
     */
    private CompletableFuture<java.util.BitSet> wholeRead(long lba, int from, int n,
            java.util.function.Function<BlockRequest, CompletableFuture<Completion>> submitter, ByteBuffer data) {
        BlockFormat f = info.format();
        byte[] meta = new byte[n * f.metadataSize()];
        long at = lba + from;
        BlockRequest r = BlockRequest.read(info.name(), at, n,
                ScatterList.of(data != null ? data : ByteBuffer.allocate(n * f.dataSize())), ScatterList.wrap(meta),
                Protection.pass(io.pistore.integrity.CheckFlags.NONE, f.refTagOf(at), 0, 0));
        return submitter.apply(r).thenApply(c -> {
            if (!c.isSuccess()) {
                throw new java.util.concurrent.CompletionException(new BlockIoException(c));
            }
            return unwrittenIn(f, meta, n);
        });
    }

    private static java.util.BitSet unwrittenIn(BlockFormat f, byte[] meta, int blocks) {
        byte[] pattern = io.pistore.integrity.UnwrittenBlock.metadata(f);
        int ms = f.metadataSize();
        java.util.BitSet unwritten = new java.util.BitSet(blocks);
        for (int i = 0; i < blocks; i++) {
            if (io.pistore.integrity.UnwrittenBlock.isUnwritten(f, pattern, meta, i * ms)) {
                unwritten.set(i);
            }
        }
        return unwritten;
    }

    // ------------------------------------------------------------------ sync helpers

    /** Writes data-only blocks (PI inserted), waiting for the completion. */
    public void writeSync(long lba, ByteBuffer data) throws BlockIoException {
        ScatterList d = ScatterList.of(data);
        await(() -> write(lba, d));
    }

    /** Reads data-only blocks (PI checked and stripped), waiting for the completion. */
    public void readSync(long lba, ByteBuffer data) throws BlockIoException {
        ScatterList d = ScatterList.of(data);
        await(() -> read(lba, d));
    }

    public void writeSync(long lba, ByteBuffer data, ByteBuffer metadata, Protection p) throws BlockIoException {
        ScatterList d = ScatterList.of(data);
        ScatterList m = ScatterList.of(metadata);
        await(() -> write(lba, d, m, p, false));
    }

    public void readSync(long lba, ByteBuffer data, ByteBuffer metadata, Protection p) throws BlockIoException {
        ScatterList d = ScatterList.of(data);
        ScatterList m = ScatterList.of(metadata);
        await(() -> read(lba, d, m, p));
    }

    public void flushSync() throws BlockIoException {
        await(this::flush);
    }

    /** Waits for a request, resubmitting while its queue is full. */
    public static Completion await(java.util.function.Supplier<CompletableFuture<Completion>> submit)
            throws BlockIoException {
        while (true) {
            Completion c;
            try {
                c = submit.get().get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BlockIoException(Completion.failure(Status.TRANSPORT_ERROR, "interrupted"));
            } catch (ExecutionException e) {
                throw new BlockIoException(Completion.failure(Status.INTERNAL_ERROR, String.valueOf(e.getCause())));
            }
            if (c.status() == Status.QUEUE_FULL) {
                LockSupport.parkNanos(50_000);
                continue;
            }
            if (!c.isSuccess()) {
                throw new BlockIoException(c);
            }
            return c;
        }
    }
}
