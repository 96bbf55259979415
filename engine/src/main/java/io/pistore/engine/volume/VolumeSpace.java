package io.pistore.engine.volume;

import io.pistore.engine.volume.file.FileVolume;
import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The room file volumes take on their directory's file system, checked before one is created and
 * when a store opens. A journal that cannot grow fails writes, and its records then go home only
 * with room for the data too: a volume whose journal ran a file system full does not open until
 * room is made. So a volume is created only where its journal (and in memory its metadata file,
 * which is filled there) fits beside what the directory's other journals are still to take; its
 * data and, on a disk, metadata files are sparse (thin), and files larger than the rest of the room
 * are a warning, as on any thin volume.
 */
final class VolumeSpace {
    private VolumeSpace() {
    }

    /** Bytes that the journals of {@code volumes} in {@code dir} are still to grow by. */
    static long journalsToGrow(Path dir, Map<String, ? extends Volume> volumes, boolean inMemory) {
        long n = 0;
        for (Map.Entry<String, ? extends Volume> e : volumes.entrySet()) {
            Path journal = dir.resolve(e.getKey() + ".journal");
            Volume v = e.getValue();
            try {
                if (Files.exists(journal)) {
                    n += Math.max(0, FileVolume.journalBytes(v.format(), v.blockCount(), inMemory) - Files.size(journal));
                }
            } catch (IOException ignored) {
                // a journal that cannot be measured counts as grown: the check errs towards creating
            }
        }
        return n;
    }

    /** Free bytes on the file system of {@code dir}, or -1 where that cannot be told. */
    static long free(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace();
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /**
     * Refuses a new volume of {@code blocks} blocks in {@code dir} whose journal (and, in memory,
     * metadata) does not fit in the free room less what {@code others}' journals are still to take.
     */
    static void checkRoomFor(Path dir, String name, BlockFormat format, long blocks,
                             Map<String, ? extends Volume> others) {
        long free = free(dir);
        if (free < 0) {
            return;
        }
        boolean inMemory = FileVolume.inMemory(dir);
        long journal = FileVolume.journalBytes(format, blocks, inMemory);
        long meta = inMemory ? blocks * format.metadataSize() : 0; // a hole on a disk, filled in memory
        long reserved = journalsToGrow(dir, others, inMemory);
        if (journal + meta > free - reserved) {
            throw new IllegalArgumentException("volume " + name + " does not fit in " + dir + ": its journal ("
                    + ByteCount.format(journal) + (meta > 0 ? ") and metadata (" + ByteCount.format(meta) + ") need "
                    : ") needs ") + ByteCount.format(journal + meta) + " before any data, and the file system has "
                    + ByteCount.format(free) + " free"
                    + (reserved > 0 ? ", " + ByteCount.format(reserved) + " of it for the other volumes' journals" : ""));
        }
    }
}
