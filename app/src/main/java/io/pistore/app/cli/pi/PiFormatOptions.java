package io.pistore.app.cli.pi;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.Numbers;
import io.pistore.app.cli.PiConverters;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import picocli.CommandLine.Option;

/** The block format and the PI fields a file was (or is to be) generated with. */
final class PiFormatOptions {
    /** Default bytes per chunk: files stream through in chunks of whole blocks of about this size. */
    static final int DEFAULT_CHUNK_BYTES = 1 << 20;

    @Option(names = "--format", required = true, paramLabel = "DATA+META",
            converter = PiConverters.SizesConverter.class,
            description = "Block layout: DATA bytes of data and META bytes of metadata per block, e.g. 512+8, 4096+16, 4k+64.")
    PiConverters.Sizes sizes;

    @Option(names = "--guard", paramLabel = "GUARD", converter = PiConverters.GuardConverter.class,
            description = "Guard: crc16, ip, crc32c or crc64 (default: crc16 for META < 16, crc64 for META >= 16).")
    GuardType guard;

    @Option(names = "--type", paramLabel = "0|1|2|3", converter = PiConverters.TypeConverter.class,
            description = "PI type (default: 1, or 0 when META is 0).")
    PiType type;

    @Option(names = "--pi-location", paramLabel = "first|last", converter = PiConverters.LocationConverter.class,
            defaultValue = "first",
            description = "Where the PI tuple sits in the metadata (default: ${DEFAULT-VALUE}); with last, the guard also covers the metadata bytes before it.")
    PiLocation location;

    @Option(names = "--ref-tag", paramLabel = "N", converter = Numbers.LongConverter.class, defaultValue = "0",
            description = "Reference tag of block 0; Types 1 and 2 add the block index, Type 3 keeps it constant (default: ${DEFAULT-VALUE}).")
    long refTag;

    @Option(names = "--app-tag", paramLabel = "N", converter = Numbers.IntConverter.class, defaultValue = "0",
            description = "Application tag, 0 to 0xffff (default: ${DEFAULT-VALUE}).")
    int appTag;

    @Option(names = "--chunk-size", paramLabel = "BYTES", converter = Numbers.SizeConverter.class,
            defaultValue = "1m",
            description = "Bytes read per step, rounded down to whole blocks, at least one block (default: ${DEFAULT-VALUE}).")
    int chunkSize;

    /** The format the options describe; an impossible one is a usage error with the library's reason. */
    BlockFormat format() {
        int meta = sizes.meta();
        GuardType g = guard != null ? guard : BlockFormat.defaultGuard(meta);
        PiType t = type != null ? type : (meta == 0 ? PiType.TYPE_0 : PiType.TYPE_1);
        try {
            return BlockFormat.of(sizes.data(), meta, g, t, location);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("format " + sizes + ": " + e.getMessage());
        }
    }

    /**
     * The format, for a command that works on the metadata ({@code verify}, {@code strip}): one
     * without metadata is a usage error, since there would be nothing to check or remove and "0 bad"
     * would claim a check that never ran.
     *
     * @param doing what the command would do with the metadata: "check", "remove"
     */
    BlockFormat formatWithMetadata(String doing) {
        BlockFormat f = format();
        if (f.metadataSize() == 0) {
            throw CliException.usage("format " + sizes + " has no metadata, so there is no PI to " + doing
                    + " (give the format the file was generated with, e.g. " + sizes.data() + "+8)");
        }
        return f;
    }

    /** A context builder with the reference and application tags (checks and mask are the caller's). */
    PiContext.Builder context(BlockFormat f) {
        return PiContext.builder(f).initialRefTag(refTag).appTag(appTag);
    }

    /** Blocks per chunk for blocks of {@code blockBytes}. */
    int blocksPerChunk(int blockBytes) {
        return Math.max(1, chunkSize / blockBytes);
    }
}
