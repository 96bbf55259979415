package io.pistore.spi;

import io.pistore.integrity.ScatterList;
import java.util.Objects;

/**
 * One block request as it crosses the transport SPI. Data is always a list of {@code DATA}-byte
 * blocks; metadata, when present, is a separate list of {@code META}-byte blocks (DIX layout in
 * memory; a transport may interleave them on the wire).
 *
 * <ul>
 *   <li>READ: {@code data} (and {@code metadata} if given) receive the blocks;
 *   <li>WRITE: {@code data} (and {@code metadata}) hold them; with PRACT and no metadata the next hop
 *       inserts the PI;
 *   <li>FLUSH: no LBA range, no buffers; WRITE_ZEROES and DEALLOCATE: an LBA range, no buffers.
 * </ul>
 */
public final class BlockRequest {
    private static final ScatterList NO_BUFFER = ScatterList.of();

    private final Operation op;
    private final String volume;
    private final long lba;
    private final int blocks;
    private final ScatterList data;
    private final ScatterList metadata;
    private final Protection protection;
    private final boolean fua;
    /** The host stream and connection that sent it, or null ({@link WriteFence}). */
    private final WriteFence fence;
    /** {@link #receivedNanos}: 0 when the transport does not say. */
    private final long receivedNanos;

    private BlockRequest(Operation op, String volume, long lba, int blocks, ScatterList data, ScatterList metadata,
                         Protection protection, boolean fua) {
        this(op, volume, lba, blocks, data, metadata, protection, fua, null, 0);
    }

    private BlockRequest(Operation op, String volume, long lba, int blocks, ScatterList data, ScatterList metadata,
                         Protection protection, boolean fua, WriteFence fence, long receivedNanos) {
        this.op = Objects.requireNonNull(op, "op");
        this.volume = Objects.requireNonNull(volume, "volume");
        this.lba = lba;
        this.blocks = blocks;
        this.data = data == null ? NO_BUFFER : data;
        this.metadata = metadata;
        this.protection = protection == null ? Protection.NONE : protection;
        this.fua = fua;
        this.fence = fence;
        this.receivedNanos = receivedNanos;
    }

    public static BlockRequest read(String volume, long lba, int blocks, ScatterList data, ScatterList metadata,
                                    Protection protection) {
        return new BlockRequest(Operation.READ, volume, lba, blocks, data, metadata, protection, false);
    }

    /**
     * A read that its transport had received whole by {@code receivedNanos} ({@link System#nanoTime};
     * see {@link #receivedNanos}).
     */
    public static BlockRequest read(String volume, long lba, int blocks, ScatterList data, ScatterList metadata,
                                    Protection protection, long receivedNanos) {
        return new BlockRequest(Operation.READ, volume, lba, blocks, data, metadata, protection, false, null,
                receivedNanos);
    }

    /**
     * A read of the blocks' metadata alone, into {@code metadata}: no data is read, and nothing is
     * checked (there is no data to check it against). Only a target whose {@link
     * TargetHandler#readsMetadataOnly} says so serves it ({@link HostConnection#readsMetadataOnly}).
     */
    public static BlockRequest readMetadata(String volume, long lba, int blocks, ScatterList metadata) {
        if (metadata == null) {
            throw new IllegalArgumentException("a metadata-only read needs a metadata list");
        }
        return new BlockRequest(Operation.READ, volume, lba, blocks, null, metadata, null, false);
    }

    /**
     * The whole read that stands for this {@link #readMetadata} request where a transport cannot carry
     * it alone: the blocks with their metadata into this request's list, data into a scratch array,
     * no PI check asked (the target still refuses unwritten-pattern blocks whose data is not zeros).
     */
    public BlockRequest wholeReadInstead(io.pistore.integrity.BlockFormat f) {
        return read(volume, lba, blocks, io.pistore.integrity.ScatterList.wrap(new byte[blocks * f.dataSize()]), metadata,
                Protection.pass(io.pistore.integrity.CheckFlags.NONE, f.refTagOf(lba), 0, 0));
    }

    /** Whether this is a {@link #readMetadata} request: a read of metadata with no data list. */
    public boolean isMetadataOnly() {
        return op == Operation.READ && data == NO_BUFFER && metadata != null;
    }

    public static BlockRequest write(String volume, long lba, int blocks, ScatterList data, ScatterList metadata,
                                     Protection protection, boolean fua) {
        return new BlockRequest(Operation.WRITE, volume, lba, blocks, data, metadata, protection, fua);
    }

    public static BlockRequest flush(String volume) {
        return new BlockRequest(Operation.FLUSH, volume, 0, 0, null, null, null, false);
    }

    public static BlockRequest writeZeroes(String volume, long lba, int blocks, boolean fua) {
        return new BlockRequest(Operation.WRITE_ZEROES, volume, lba, blocks, null, null, null, fua);
    }

    public static BlockRequest deallocate(String volume, long lba, int blocks) {
        return new BlockRequest(Operation.DEALLOCATE, volume, lba, blocks, null, null, null, false);
    }

    /** The same request with other buffers (a transport rebuilding a request on the target side). */
    public BlockRequest withBuffers(ScatterList newData, ScatterList newMetadata) {
        return new BlockRequest(op, volume, lba, blocks, newData, newMetadata, protection, fua, fence, receivedNanos);
    }

    /** The same request with other protection fields (e.g. PRACT cleared after a hop inserted the PI). */
    public BlockRequest withProtection(Protection p) {
        return new BlockRequest(op, volume, lba, blocks, data, metadata, p, fua, fence, receivedNanos);
    }

    /**
     * On a host queue: a write, write-zeroes or deallocation numbered in its stream {@code key} with
     * the next of {@code seqs} (its {@link WriteFence#seq}, which every copy it sends keeps; the
     * connection's own fence gives the epoch); other requests, and one numbered already, as they are.
     */
    public BlockRequest numbered(long key, java.util.function.LongSupplier seqs) {
        if (op == Operation.READ || op == Operation.FLUSH || (fence != null && fence.key() == key && fence.seq() != 0)) {
            return this; // a copy sent again keeps its number
        }
        return withFence(new WriteFence(key, 1, seqs.getAsLong()));
    }

    /** The number this write carries in the stream of {@code stream} (0: none, or it is another stream's). */
    public long seqIn(WriteFence stream) {
        return stream == null || fence == null || fence.key() != stream.key() ? 0 : fence.seq();
    }

    /** The same request as sent by the host stream and connection {@code f} (null: none). */
    public BlockRequest withFence(WriteFence f) {
        return f == fence ? this : new BlockRequest(op, volume, lba, blocks, data, metadata, protection, fua, f,
                receivedNanos);
    }

    /**
     * A {@link System#nanoTime} reading taken after this process had received the whole request (so
     * after its host sent it), or 0 when the transport does not say. A read index confirmed by a call
     * that started after this time covers every write acknowledged before the host sent the request:
     * reads received together may share one confirmation.
     */
    public long receivedNanos() {
        return receivedNanos;
    }

    /** The host stream and connection that sent this request, or null when its transport says none. */
    public WriteFence fence() {
        return fence;
    }

    public Operation op() {
        return op;
    }

    public String volume() {
        return volume;
    }

    public long lba() {
        return lba;
    }

    public int blocks() {
        return blocks;
    }

    public ScatterList data() {
        return data;
    }

    /** The separate metadata list, or null when the request carries none. */
    public ScatterList metadata() {
        return metadata;
    }

    public boolean hasMetadata() {
        return metadata != null;
    }

    public Protection protection() {
        return protection;
    }

    public boolean fua() {
        return fua;
    }

    @Override
    public String toString() {
        return op + " " + volume + " lba=" + lba + " blocks=" + blocks + (metadata != null ? " +meta" : "") + " "
                + protection + (fua ? " fua" : "") + (fence != null ? " " + fence : "");
    }
}
