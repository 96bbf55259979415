package io.pistore.spi;

import io.pistore.integrity.BlockFormat;

/**
 * The checks every hop makes on a request before touching data, in one place: a host transport
 * before anything goes on the wire, the target service before anything is read or stored.
 */
public final class RequestCheck {
    private RequestCheck() {
    }

    /**
     * The failure a request earns against a volume ({@code INVALID_FIELD} or {@code LBA_OUT_OF_RANGE},
     * with a one-line reason), or null when it may proceed. FLUSH needs no range and always passes.
     */
    public static Completion validate(BlockRequest r, VolumeInfo v, long maxTransferBytes) {
        if (r.op() == Operation.FLUSH) {
            return null;
        }
        BlockFormat f = v.format();
        if (r.blocks() <= 0) {
            return Completion.failure(Status.INVALID_FIELD, "block count must be at least 1, not " + r.blocks());
        }
        if (r.lba() < 0 || r.lba() > v.blockCount() - r.blocks()) {
            return Completion.failure(Status.LBA_OUT_OF_RANGE, "lba " + r.lba() + " + " + r.blocks()
                    + " blocks is beyond the " + v.blockCount() + " blocks of volume " + v.name());
        }
        if (r.op() != Operation.READ && r.op() != Operation.WRITE) {
            return null;
        }
        if ((long) r.blocks() * f.blockSize() > maxTransferBytes) {
            return Completion.failure(Status.INVALID_FIELD, r.blocks() + " blocks exceed the largest transfer of "
                    + maxTransferBytes + " bytes");
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
        Protection p = r.protection();
        if (f.hasPi() && (p.initialRefTag() & ~f.guard().refTagMask()) != 0) {
            return Completion.failure(Status.INVALID_FIELD, "initial ref tag 0x" + Long.toHexString(p.initialRefTag())
                    + " does not fit the " + f.guard().refTagSize() * 8 + "-bit reference tag");
        }
        return null;
    }
}
