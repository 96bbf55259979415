package io.pistore.frontend.nbd;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One volume as an NBD export: byte ranges mapped to block requests on a {@link BlockDevice}, data
 * only, so the PI is inserted on the way in and checked and stripped on the way out by whatever
 * transport the device uses.
 *
 * <p>Requests that do not start and end on a block boundary are served by read-modify-write: the
 * partial edge blocks are read (their PI checked), merged with the client's bytes and the whole
 * span written back with fresh PI. Two such writes that touch the same block but not the same bytes
 * are serialized by a lock stripe on the edge block's LBA, so neither loses the other's bytes.
 */
final class NbdExport {
    private static final int STRIPES = 64;
    /** Blocks per deallocate / write-zeroes request (1 GiB of 4 KiB blocks). */
    private static final int ZERO_CHUNK_BLOCKS = 1 << 18;

    final String name;
    final long size;
    final int dataSize;
    final int maxPayload;
    private final BlockDevice device;
    private final Backend backend;
    private final AsyncLock[] stripes = new AsyncLock[STRIPES];
    private volatile ByteBuffer zeros;

    /** Whether the target lets this server only read the volume (its access rules): the export is then read-only. */
    boolean readOnly() {
        return device.info().readOnly();
    }

    NbdExport(BlockDevice device, Backend backend, int maxTransferBytes) {
        VolumeInfo info = device.info();
        this.name = info.name();
        this.device = device;
        this.backend = backend;
        this.dataSize = info.format().dataSize();
        this.size = info.dataBytes();
        this.maxPayload = maxPayload(info.format(), maxTransferBytes);
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new AsyncLock();
        }
    }

    /**
     * The largest power-of-two payload (at least one block, at most 32 MiB) whose blocks, plus one
     * more for an unaligned request's extra edge block, fit one transfer with their metadata.
     */
    static int maxPayload(BlockFormat f, int maxTransferBytes) {
        int p = f.dataSize();
        while (p < NbdProtocol.PORTABLE_PAYLOAD_LIMIT
                && ((long) (2 * p) / f.dataSize() + 1) * f.blockSize() <= maxTransferBytes) {
            p *= 2;
        }
        return p;
    }

    VolumeInfo info() {
        return device.info();
    }

    String description() {
        VolumeInfo v = device.info();
        return v.format().toString();
    }

    private boolean aligned(long offset, long length) {
        return offset % dataSize == 0 && length % dataSize == 0;
    }

    // ------------------------------------------------------------------ read

    /**
     * Reads {@code dst.remaining()} bytes at {@code offset} into {@code dst} (its position is kept), for
     * a request received whole by {@code receivedNanos} (0: not known).
     */
    CompletableFuture<Outcome> read(long offset, ByteBuffer dst, long receivedNanos) {
        int len = dst.remaining();
        if (aligned(offset, len)) {
            ScatterList d = ScatterList.of(dst.slice());
            long lba = offset / dataSize;
            return backend.submit(device, readRequest(lba, len / dataSize, d, receivedNanos))
                    .thenApply(c -> Outcome.of(c, offset, len, dataSize));
        }
        long first = offset / dataSize;
        long last = (offset + len - 1) / dataSize;
        ByteBuffer span = ByteBuffer.allocate((int) ((last - first + 1) * dataSize));
        ScatterList d = ScatterList.of(span.duplicate());
        return backend.submit(device, readRequest(first, (int) (last - first + 1), d, receivedNanos)).thenApply(c -> {
            Outcome o = Outcome.of(c, offset, len, dataSize);
            if (o.isOk()) {
                ByteBuffer part = span.duplicate();
                part.position((int) (offset - first * dataSize)).limit(part.position() + len);
                dst.duplicate().put(part);
            }
            return o;
        });
    }

    // ------------------------------------------------------------------ write

    /** Writes {@code src.remaining()} bytes at {@code offset}. */
    CompletableFuture<Outcome> write(long offset, ByteBuffer src, boolean fua) {
        int len = src.remaining();
        if (aligned(offset, len)) {
            return writeBlocks(offset / dataSize, src.slice(), fua, offset, len);
        }
        return readModifyWrite(offset, src.slice(), fua);
    }

    private CompletableFuture<Outcome> writeBlocks(long lba, ByteBuffer blocks, boolean fua, long reqOffset,
                                                   long reqLength) {
        ScatterList d = ScatterList.of(blocks);
        BlockRequest w = BlockRequest.write(name, lba, blocks.remaining() / dataSize, d, null, device.insertStrip(lba),
                fua);
        return backend.submit(device, w).thenApply(c -> Outcome.of(c, reqOffset, reqLength, dataSize));
    }

    /**
     * Locks the edge blocks, reads the partial ones, merges {@code src} in and writes the span back.
     * Never blocks the calling thread: the lock is a future.
     */
    private CompletableFuture<Outcome> readModifyWrite(long offset, ByteBuffer src, boolean fua) {
        int len = src.remaining();
        long first = offset / dataSize;
        long last = (offset + len - 1) / dataSize;
        int a = stripe(first);
        int b = stripe(last);
        AsyncLock lo = stripes[Math.min(a, b)];
        AsyncLock hi = a == b ? null : stripes[Math.max(a, b)];
        CompletableFuture<Void> locked = lo.acquire();
        if (hi != null) {
            locked = locked.thenCompose(v -> hi.acquire());
        }
        return locked.thenCompose(v -> mergeAndWrite(offset, src, fua, first, last)).whenComplete((o, ex) -> {
            if (hi != null) {
                hi.release();
            }
            lo.release();
        });
    }

    private CompletableFuture<Outcome> mergeAndWrite(long offset, ByteBuffer src, boolean fua, long first, long last) {
        int len = src.remaining();
        int blocks = (int) (last - first + 1);
        boolean headPartial = offset % dataSize != 0;
        boolean tailPartial = (offset + len) % dataSize != 0;
        ByteBuffer span = ByteBuffer.allocate(blocks * dataSize);
        List<CompletableFuture<Outcome>> reads = new ArrayList<>(2);
        if (headPartial) {
            reads.add(readBlock(first, span, 0, offset, len));
        }
        if (tailPartial && (last != first || !headPartial)) {
            reads.add(readBlock(last, span, (blocks - 1) * dataSize, offset, len));
        }
        return all(reads).thenCompose(o -> {
            if (!o.isOk()) {
                return CompletableFuture.completedFuture(o);
            }
            ByteBuffer into = span.duplicate();
            into.position((int) (offset - first * dataSize));
            into.put(src.duplicate());
            return writeBlocks(first, span.duplicate().clear(), fua, offset, len);
        });
    }

    private CompletableFuture<Outcome> readBlock(long lba, ByteBuffer span, int at, long reqOffset, long reqLength) {
        ByteBuffer one = span.duplicate();
        one.position(at).limit(at + dataSize);
        ScatterList d = ScatterList.of(one.slice());
        return backend.submit(device, readRequest(lba, 1, d, 0))
                .thenApply(c -> Outcome.of(c, reqOffset, reqLength, dataSize));
    }

    /** A data-only read: PI checked and stripped on the way out. */
    private BlockRequest readRequest(long lba, int blocks, ScatterList data, long receivedNanos) {
        return BlockRequest.read(name, lba, blocks, data, null, device.insertStrip(lba), receivedNanos);
    }

    private static int stripe(long lba) {
        long h = lba * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 58) & (STRIPES - 1);
    }

    // ------------------------------------------------------------------ flush, trim, zeroes

    CompletableFuture<Outcome> flush() {
        return backend.submit(device, BlockRequest.flush(name)).thenApply(c -> Outcome.of(c, 0, 0, dataSize));
    }

    /** Deallocates the whole blocks inside the range; partial edge blocks are left as they are. */
    CompletableFuture<Outcome> trim(long offset, long length) {
        long first = (offset + dataSize - 1) / dataSize;
        long end = (offset + length) / dataSize;
        List<Supplier<CompletableFuture<Outcome>>> steps = new ArrayList<>();
        for (long lba = first; lba < end; lba += ZERO_CHUNK_BLOCKS) {
            long l = lba;
            int n = (int) Math.min(ZERO_CHUNK_BLOCKS, end - lba);
            steps.add(() -> backend.submit(device, BlockRequest.deallocate(name, l, n))
                    .thenApply(c -> Outcome.of(c, offset, length, dataSize)));
        }
        return sequence(steps);
    }

    /**
     * Zeroes the range. Whole blocks are written as unwritten blocks (zero data, escape PI), or with
     * {@code noHole} as zero data with real PI; partial edge blocks by read-modify-write.
     */
    CompletableFuture<Outcome> writeZeroes(long offset, long length, boolean fua, boolean noHole) {
        long firstWhole = (offset + dataSize - 1) / dataSize;
        long endWhole = (offset + length) / dataSize;
        long end = offset + length;
        List<Supplier<CompletableFuture<Outcome>>> steps = new ArrayList<>();
        if (firstWhole >= endWhole) {
            // Inside one block, or across one boundary without a whole block: one read-modify-write.
            steps.add(() -> readModifyWrite(offset, ByteBuffer.allocate((int) length), fua));
            return sequence(steps);
        }
        long headEnd = firstWhole * dataSize;
        if (offset < headEnd) {
            steps.add(() -> readModifyWrite(offset, ByteBuffer.allocate((int) (headEnd - offset)), fua));
        }
        if (noHole) {
            int chunk = maxPayload / dataSize;
            for (long lba = firstWhole; lba < endWhole; lba += chunk) {
                long l = lba;
                int n = (int) Math.min(chunk, endWhole - lba);
                steps.add(() -> writeBlocks(l, zeros(n), fua, offset, length));
            }
        } else {
            for (long lba = firstWhole; lba < endWhole; lba += ZERO_CHUNK_BLOCKS) {
                long l = lba;
                int n = (int) Math.min(ZERO_CHUNK_BLOCKS, endWhole - lba);
                steps.add(() -> backend.submit(device, BlockRequest.writeZeroes(name, l, n, fua))
                        .thenApply(c -> Outcome.of(c, offset, length, dataSize)));
            }
        }
        long tailStart = endWhole * dataSize;
        if (tailStart < end) {
            steps.add(() -> readModifyWrite(tailStart, ByteBuffer.allocate((int) (end - tailStart)), fua));
        }
        return sequence(steps);
    }

    /** {@code blocks} zero blocks from one shared, never written buffer of the largest payload. */
    private ByteBuffer zeros(int blocks) {
        ByteBuffer z = zeros;
        if (z == null) {
            z = ByteBuffer.allocate(maxPayload);
            zeros = z;
        }
        ByteBuffer b = z.duplicate();
        b.limit(blocks * dataSize);
        return b.slice();
    }

    // ------------------------------------------------------------------ block status

    /** The {@code base:allocation} extents of a range: byte lengths and NBD state flags, in order. */
    static final class Extents {
        final Outcome outcome;
        final int count;
        final int[] lengths;
        final int[] flags;

        Extents(Outcome outcome, int count, int[] lengths, int[] flags) {
            this.outcome = outcome;
            this.count = count;
            this.lengths = lengths;
            this.flags = flags;
        }
    }

    /**
     * The allocation of {@code [offset, offset+length)} (inside the export, length at least 1), from
     * its start, for as many blocks as one read of data and metadata carries (the client asks again
     * for the rest, as the protocol allows): unwritten blocks are {@code HOLE|ZERO}, written ones 0.
     * With {@code one}, only the first extent. Never longer than asked.
     */
    CompletableFuture<Extents> blockStatus(long offset, long length, boolean one) {
        return blockStatus(offset, length, one, null);
    }

    /** Whether a {@link #blockStatus} reads blocks: only a format with PI can tell unwritten blocks. */
    boolean statusReads() {
        return device.format().hasPi();
    }

    /** The blocks one {@link #blockStatus} of {@code [offset, offset+length)} reads. */
    int statusBlocks(long offset, long length) {
        long first = offset / dataSize;
        long endBlock = (offset + length + dataSize - 1) / dataSize;
        return (int) Math.min(endBlock - first, maxPayload / dataSize);
    }

    /**
     * {@link #blockStatus(long, long, boolean)} reading the blocks' data into {@code scratch} (null: a
     * new array; else at least {@link #statusBlocks} blocks of data), which the caller keeps until the
     * answer completes.
     */
    CompletableFuture<Extents> blockStatus(long offset, long length, boolean one, java.nio.ByteBuffer scratch) {
        long end = offset + length;
        long first = offset / dataSize;
        int blocks = statusBlocks(offset, length);
        return device.unwrittenBlocks(first, blocks, r -> backend.submit(device, r), scratch).handle((holes, ex) -> {
            if (ex != null) {
                Throwable cause = ex instanceof java.util.concurrent.CompletionException && ex.getCause() != null
                        ? ex.getCause() : ex;
                Outcome o = cause instanceof io.pistore.engine.BlockIoException
                        ? Outcome.of(((io.pistore.engine.BlockIoException) cause).completion(), offset, length, dataSize)
                        : Outcome.error(NbdProtocol.EIO, String.valueOf(cause));
                return new Extents(o, 0, null, null);
            }
            int[] lengths = new int[one ? 1 : blocks];
            int[] flags = new int[lengths.length];
            int n = 0;
            int i = 0;
            while (i < blocks && n < lengths.length) {
                boolean hole = holes.get(i);
                int j = hole ? holes.nextClearBit(i) : holes.nextSetBit(i);
                if (j < 0 || j > blocks) {
                    j = blocks;
                }
                long from = Math.max(offset, (first + i) * dataSize);
                long to = Math.min(end, (first + j) * dataSize);
                lengths[n] = (int) (to - from);
                flags[n] = hole ? NbdProtocol.STATE_HOLE | NbdProtocol.STATE_ZERO : 0;
                n++;
                i = j;
            }
            return new Extents(Outcome.OK, n, lengths, flags);
        });
    }

    // ------------------------------------------------------------------ helpers

    /** Runs the steps one after the other, stopping at the first failure. */
    private static CompletableFuture<Outcome> sequence(List<Supplier<CompletableFuture<Outcome>>> steps) {
        CompletableFuture<Outcome> f = CompletableFuture.completedFuture(Outcome.OK);
        for (Supplier<CompletableFuture<Outcome>> s : steps) {
            f = f.thenCompose(o -> o.isOk() ? s.get() : CompletableFuture.completedFuture(o));
        }
        return f;
    }

    /** All of the futures; the outcome is the first failure (by list order), else success. */
    private static CompletableFuture<Outcome> all(List<CompletableFuture<Outcome>> fs) {
        return CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
            for (CompletableFuture<Outcome> f : fs) {
                Outcome o = f.join();
                if (!o.isOk()) {
                    return o;
                }
            }
            return Outcome.OK;
        });
    }

    /** Whether a completion is a PI error (for tests and logs). */
    static boolean isPiError(Completion c) {
        return c.status().isPiError();
    }
}
