package io.pistore.spi;

import io.pistore.integrity.BlockFormat;
import java.util.Objects;

/**
 * What a host learns about a volume at discovery: its name, size in blocks and format, and whether
 * it may only read it (a target's access rules, docs/SECURITY.md).
 */
public final class VolumeInfo {
    private final String name;
    private final long blockCount;
    private final BlockFormat format;
    private final boolean readOnly;

    public VolumeInfo(String name, long blockCount, BlockFormat format) {
        this(name, blockCount, format, false);
    }

    public VolumeInfo(String name, long blockCount, BlockFormat format, boolean readOnly) {
        this.name = Objects.requireNonNull(name, "name");
        this.blockCount = blockCount;
        this.format = Objects.requireNonNull(format, "format");
        this.readOnly = readOnly;
    }

    /** The same volume, read-only to whoever is told of it. */
    public VolumeInfo asReadOnly() {
        return readOnly ? this : new VolumeInfo(name, blockCount, format, true);
    }

    public String name() {
        return name;
    }

    public long blockCount() {
        return blockCount;
    }

    public BlockFormat format() {
        return format;
    }

    /** Whether writes, zero writes and deallocations are refused ({@link Status#ACCESS_DENIED}). */
    public boolean readOnly() {
        return readOnly;
    }

    /** Size of the data in bytes. */
    public long dataBytes() {
        return blockCount * format.dataSize();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof VolumeInfo)) return false;
        VolumeInfo v = (VolumeInfo) o;
        return name.equals(v.name) && blockCount == v.blockCount && format.equals(v.format) && readOnly == v.readOnly;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, blockCount, format, readOnly);
    }

    @Override
    public String toString() {
        return name + " " + blockCount + " blocks " + format + (readOnly ? " read-only" : "");
    }
}
