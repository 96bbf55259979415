package io.pistore.integrity;

import java.util.Objects;

/**
 * A logical block layout: {@code DATA+META} bytes, the guard (and with it the PI tuple), the PI type
 * and where the tuple sits in the metadata. Immutable; construction rejects impossible layouts.
 *
 * <p>Rules (as SPDK's {@code spdk_dif_ctx_init} and the NVMe format rules):
 * <ul>
 *   <li>data size is a power of two from 512 to 65536 bytes;
 *   <li>metadata is 0 to 128 bytes;
 *   <li>a protected type (1-3) needs metadata at least the tuple size (8 or 16);
 *   <li>16-byte tuples (crc32c, crc64) need data blocks of at least 4096 bytes.
 * </ul>
 */
public final class BlockFormat {
    public static final int MIN_DATA_SIZE = 512;
    public static final int MAX_DATA_SIZE = 65536;
    public static final int MAX_METADATA_SIZE = 128;

    private final int dataSize;
    private final int metadataSize;
    private final GuardType guard;
    private final PiType type;
    private final PiLocation location;
    /** Computed once: formats key per-format caches looked up on every request. */
    private final int hash;

    private BlockFormat(int dataSize, int metadataSize, GuardType guard, PiType type, PiLocation location) {
        this.dataSize = dataSize;
        this.metadataSize = metadataSize;
        this.guard = Objects.requireNonNull(guard, "guard");
        this.type = Objects.requireNonNull(type, "type");
        this.location = Objects.requireNonNull(location, "location");
        validate();
        this.hash = Objects.hash(dataSize, metadataSize, guard, type, location);
    }

    /** A format with every field given. */
    public static BlockFormat of(int dataSize, int metadataSize, GuardType guard, PiType type, PiLocation location) {
        return new BlockFormat(dataSize, metadataSize, guard, type, location);
    }

    /**
     * A format with the defaults of the {@code pi} tool: Type 1 when there is metadata (else Type 0),
     * CRC-16 for 8-byte metadata and CRC-64 for 16 bytes or more, PI first.
     */
    public static BlockFormat of(int dataSize, int metadataSize) {
        return new BlockFormat(dataSize, metadataSize, defaultGuard(metadataSize),
                metadataSize == 0 ? PiType.TYPE_0 : PiType.TYPE_1, PiLocation.FIRST);
    }

    /** The default guard for a metadata size: crc16 below 16 bytes, crc64 from 16 bytes. */
    public static GuardType defaultGuard(int metadataSize) {
        return metadataSize >= 16 ? GuardType.CRC64 : GuardType.CRC16;
    }

    /** Parses {@code DATA+META} (e.g. {@code 4096+8}, {@code 4k+16}) with the defaults of {@link #of(int, int)}. */
    public static BlockFormat parse(String s) {
        int[] dm = parseSizes(s);
        return of(dm[0], dm[1]);
    }

    /** Parses {@code DATA+META} into two ints; a bare {@code DATA} means no metadata. */
    public static int[] parseSizes(String s) {
        String t = s.trim();
        int plus = t.indexOf('+');
        String d = plus < 0 ? t : t.substring(0, plus);
        String m = plus < 0 ? "0" : t.substring(plus + 1);
        try {
            return new int[] {parseSize(d), parseSize(m)};
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("format must look like DATA+META, e.g. 4096+8, not '" + s + "'");
        }
    }

    private static int parseSize(String s) {
        String t = s.trim().toLowerCase(java.util.Locale.ROOT);
        int mult = 1;
        if (t.endsWith("k")) {
            mult = 1024;
            t = t.substring(0, t.length() - 1);
        }
        return Math.multiplyExact(Integer.parseInt(t), mult);
    }

    public BlockFormat withGuard(GuardType g) {
        return new BlockFormat(dataSize, metadataSize, g, type, location);
    }

    public BlockFormat withType(PiType t) {
        return new BlockFormat(dataSize, metadataSize, guard, t, location);
    }

    public BlockFormat withLocation(PiLocation l) {
        return new BlockFormat(dataSize, metadataSize, guard, type, l);
    }

    private void validate() {
        if (dataSize < MIN_DATA_SIZE || dataSize > MAX_DATA_SIZE || Integer.bitCount(dataSize) != 1) {
            throw new IllegalArgumentException("data size must be a power of two from " + MIN_DATA_SIZE
                    + " to " + MAX_DATA_SIZE + " bytes, not " + dataSize);
        }
        if (metadataSize < 0 || metadataSize > MAX_METADATA_SIZE) {
            throw new IllegalArgumentException("metadata size must be 0 to " + MAX_METADATA_SIZE
                    + " bytes, not " + metadataSize);
        }
        if (type.isProtected()) {
            if (metadataSize < guard.tupleSize()) {
                throw new IllegalArgumentException("PI type " + type.number() + " with guard " + guard.cliName()
                        + " needs at least " + guard.tupleSize() + " bytes of metadata, the format has "
                        + metadataSize);
            }
            if (guard.tupleSize() == 16 && dataSize < 4096) {
                throw new IllegalArgumentException("guard " + guard.cliName()
                        + " (16-byte PI) needs data blocks of at least 4096 bytes, not " + dataSize);
            }
        }
    }

    /** Bytes of data per block. */
    public int dataSize() {
        return dataSize;
    }

    /** Bytes of metadata per block. */
    public int metadataSize() {
        return metadataSize;
    }

    /** Bytes of an interleaved (extended) block: data + metadata. */
    public int blockSize() {
        return dataSize + metadataSize;
    }

    public GuardType guard() {
        return guard;
    }

    public PiType type() {
        return type;
    }

    public PiLocation location() {
        return location;
    }

    /** Whether blocks of this format carry a PI tuple. */
    public boolean hasPi() {
        return type.isProtected();
    }

    /**
     * The reference tag that names block {@code lba} of a volume in this format: the LBA cut to the
     * reference tag's width (32 bits for 16- and 32-bit guards, 48 for 64-bit). The one place the
     * LBA-to-ref-tag rule lives; Type 1 demands it of the first block of every request.
     */
    public long refTagOf(long lba) {
        return lba & guard.refTagMask();
    }

    /** Bytes of the tuple, 0 when the format carries no PI. */
    public int tupleSize() {
        return hasPi() ? guard.tupleSize() : 0;
    }

    /** Offset of the tuple inside the metadata: 0 when first (or without PI), {@code META - tuple} when last. */
    public int tupleOffsetInMetadata() {
        return location == PiLocation.FIRST || !hasPi() ? 0 : metadataSize - guard.tupleSize();
    }

    /** Metadata bytes covered by the guard: those before the tuple (none without PI). */
    public int guardedMetadataPrefix() {
        return tupleOffsetInMetadata();
    }

    /** {@code DATA+META}, e.g. {@code 4096+8}. */
    public String sizes() {
        return dataSize + "+" + metadataSize;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof BlockFormat)) return false;
        BlockFormat f = (BlockFormat) o;
        return dataSize == f.dataSize && metadataSize == f.metadataSize && guard == f.guard && type == f.type
                && location == f.location;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** e.g. {@code 4096+8 type=1 guard=crc16 pi=first}. */
    @Override
    public String toString() {
        return sizes() + " type=" + type.number() + " guard=" + guard.cliName() + " pi="
                + location.name().toLowerCase(java.util.Locale.ROOT);
    }
}
