package io.pistore.spi;

import io.pistore.integrity.BlockFormat;
import java.util.Objects;

/** What a host learns about a volume at discovery: its name, size in blocks and format. */
public final class VolumeInfo {
    private final String name;
    private final long blockCount;
    private final BlockFormat format;

    public VolumeInfo(String name, long blockCount, BlockFormat format) {
        this.name = Objects.requireNonNull(name, "name");
        this.blockCount = blockCount;
        this.format = Objects.requireNonNull(format, "format");
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

    /** Size of the data in bytes. */
    public long dataBytes() {
        return blockCount * format.dataSize();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof VolumeInfo)) return false;
        VolumeInfo v = (VolumeInfo) o;
        return name.equals(v.name) && blockCount == v.blockCount && format.equals(v.format);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, blockCount, format);
    }

    @Override
    public String toString() {
        return name + " " + blockCount + " blocks " + format;
    }
}
