package io.pistore.it.reliability;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The contents the crash tests write: version {@code v} of block {@code lba} is 4096 bytes that
 * start with (lba, v) and go on with a fill seeded by both, so a read tells exactly which complete
 * version a block holds, or that it holds none (a mix). Version 0 is all zeros (never written, or
 * written with zeroes).
 */
final class BlockVersions {
    static final int BS = 4096;
    /** What {@link #versionOf} says of a block that is no complete version of its LBA. */
    static final long MIX = -1;

    private BlockVersions() {
    }

    static byte[] content(long lba, long version) {
        byte[] b = new byte[BS];
        if (version == 0) {
            return b;
        }
        new SplittableRandom(lba * 0x9E3779B97F4A7C15L ^ version).nextBytes(b);
        ByteBuffer.wrap(b).putLong(0, lba).putLong(8, version);
        return b;
    }

    /** The version block {@code lba} holds in {@code b[off, off + BS)}, or {@link #MIX}. */
    static long versionOf(long lba, byte[] b, int off) {
        byte[] block = off == 0 && b.length == BS ? b : Arrays.copyOfRange(b, off, off + BS);
        ByteBuffer w = ByteBuffer.wrap(block);
        long l = w.getLong(0);
        long v = w.getLong(8);
        if (l == 0 && v == 0) {
            return Arrays.equals(block, content(lba, 0)) ? 0 : MIX;
        }
        if (l != lba || v <= 0) {
            return MIX;
        }
        return Arrays.equals(block, content(lba, v)) ? v : MIX;
    }
}
