package io.pistore.spi;

import io.pistore.integrity.BlockFormat;

/**
 * The checks every hop makes on a request before touching data, in one place: a host transport
 * before anything goes on the wire, a transport's target before it sizes a buffer for the payload,
 * the target service before anything is read or stored.
 *
 * <p>{@link #validateHeader} needs only what a command header carries, so a target can refuse a
 * request (an LBA out of range, a transfer over the limit) before it allocates anything for it;
 * {@link #validate} adds the checks of the request's buffers.
 */
public final class RequestCheck {
    private RequestCheck() {
    }

    /**
     * The failure a whole request earns against a volume ({@code INVALID_FIELD} or
     * {@code LBA_OUT_OF_RANGE}, with a one-line reason), or null when it may proceed. FLUSH needs no
     * range and always passes.
     */
    public static Completion validate(BlockRequest r, VolumeInfo v, long maxTransferBytes) {
        return validate(r, v, maxTransferBytes, false);
    }

    /**
     * {@link #validate(BlockRequest, VolumeInfo, long)} where {@code metadataOnly} says whether a
     * {@link BlockRequest#readMetadata} may proceed (a target that serves it, {@link
     * TargetHandler#readsMetadataOnly}, or a host transport that carries it); elsewhere it is refused.
     */
    public static Completion validate(BlockRequest r, VolumeInfo v, long maxTransferBytes, boolean metadataOnly) {
        Completion c = validateHeader(r.op(), r.lba(), r.blocks(), r.protection(), v, maxTransferBytes);
        if (c != null || r.op() != Operation.READ && r.op() != Operation.WRITE) {
            return c;
        }
        BlockFormat f = v.format();
        if (r.isMetadataOnly()) {
            if (!metadataOnly) {
                return Completion.failure(Status.INVALID_FIELD, "a metadata-only read is served only where the"
                        + " connection says so (HostConnection.readsMetadataOnly)");
            }
            long metaLen = (long) r.blocks() * f.metadataSize();
            if (f.metadataSize() == 0 || r.metadata().length() != metaLen || r.metadata().isReadOnly()) {
                return Completion.failure(Status.INVALID_FIELD, "a metadata-only read of " + r.blocks()
                        + " blocks of " + f.sizes() + " needs a writable metadata list of " + metaLen + " bytes");
            }
            return null;
        }
        long dataLen = (long) r.blocks() * f.dataSize();
        if (r.data().length() != dataLen) {
            return Completion.failure(Status.INVALID_FIELD, "data buffer holds " + r.data().length() + " bytes, "
                    + r.blocks() + " blocks of " + f.dataSize() + " need " + dataLen);
        }
        if (r.hasMetadata()) {
            long metaLen = (long) r.blocks() * f.metadataSize();
            if (f.metadataSize() == 0) {
                return Completion.failure(Status.INVALID_FIELD, "volume " + v.name() + " (" + f.sizes()
                        + ") has no metadata, the request carries some");
            }
            if (r.metadata().length() != metaLen) {
                return Completion.failure(Status.INVALID_FIELD, "metadata buffer holds " + r.metadata().length()
                        + " bytes, " + r.blocks() + " blocks of " + f.metadataSize() + " need " + metaLen);
            }
        } else if (f.hasPi() && !r.protection().pract() && r.op() == Operation.WRITE) {
            return Completion.failure(Status.INVALID_FIELD, "a write without PRACT to a volume with PI ("
                    + f.sizes() + ") must carry its metadata");
        }
        if (r.op() == Operation.READ && (r.data().isReadOnly() || r.hasMetadata() && r.metadata().isReadOnly())) {
            return Completion.failure(Status.INVALID_FIELD, "a read needs writable buffers");
        }
        return null;
    }

    /**
     * The failure a request's header earns against a volume, or null when it may proceed: the block
     * count, the LBA range, the transfer limit (blocks × the format's block size, data plus metadata,
     * for reads and writes) and the width of the initial reference tag. {@code blocks} is a long so
     * that a wire's unsigned count is checked before it is narrowed.
     */
    public static Completion validateHeader(Operation op, long lba, long blocks, Protection p, VolumeInfo v,
                                            long maxTransferBytes) {
        if (op == Operation.FLUSH) {
            return null;
        }
        if (blocks < 1 || blocks > Integer.MAX_VALUE) {
            return Completion.failure(Status.INVALID_FIELD, "block count must be 1 to " + Integer.MAX_VALUE
                    + ", not " + blocks);
        }
        if (lba < 0 || lba > v.blockCount() - blocks) {
            return Completion.failure(Status.LBA_OUT_OF_RANGE, "lba " + lba + " + " + blocks
                    + " blocks is beyond the " + v.blockCount() + " blocks of volume " + v.name());
        }
        if (op != Operation.READ && op != Operation.WRITE) {
            return null;
        }
        BlockFormat f = v.format();
        if (blocks * f.blockSize() > maxTransferBytes) {
            return Completion.failure(Status.INVALID_FIELD, blocks + " blocks exceed the largest transfer of "
                    + maxTransferBytes + " bytes");
        }
        if (f.hasPi() && f.refTagOf(p.initialRefTag()) != p.initialRefTag()) {
            return Completion.failure(Status.INVALID_FIELD, "initial ref tag 0x" + Long.toHexString(p.initialRefTag())
                    + " does not fit the " + f.guard().refTagSize() * 8 + "-bit reference tag");
        }
        return null;
    }
}
