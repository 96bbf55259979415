package io.pistore.engine.volume;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Striped read-write locks over block addresses. They make each block atomic, as NVMe promises for
 * one logical block: a read that races a write of the same block sees the old block or the new one,
 * data and PI together, never a torn mix (which PI would report as a false guard error). Stripes are
 * always taken in ascending order, so two multi-block requests cannot deadlock.
 */
public final class BlockLocks {
    private static final int STRIPES = 64;
    private final ReentrantReadWriteLock[] locks = new ReentrantReadWriteLock[STRIPES];

    public BlockLocks() {
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantReadWriteLock();
        }
    }

    /** Bit s set: stripe s covers a block of {@code [lba, lba + blocks)}. */
    private static long stripes(long lba, int blocks) {
        if (blocks >= STRIPES) {
            return -1L;
        }
        long mask = 0;
        for (int i = 0; i < blocks; i++) {
            mask |= 1L << (int) Math.floorMod(lba + i, (long) STRIPES);
        }
        return mask;
    }

    /** Locks every block: no other reader or writer runs until {@link #unlock} with the token. */
    public long lockAll(boolean write) {
        return lock(0, STRIPES, write);
    }

    /** Whether a token from {@link #lock} covers every block (a request of at least {@code STRIPES} blocks). */
    public static boolean coversAll(long token) {
        return token == -1L;
    }

    /** Locks the blocks; returns the token to pass to {@link #unlock}. */
    public long lock(long lba, int blocks, boolean write) {
        long mask = stripes(lba, blocks);
        for (long m = mask; m != 0; m &= m - 1) {
            ReentrantReadWriteLock l = locks[Long.numberOfTrailingZeros(m)];
            if (write) {
                l.writeLock().lock();
            } else {
                l.readLock().lock();
            }
        }
        return mask;
    }

    public void unlock(long token, boolean write) {
        for (long m = token; m != 0; m &= m - 1) {
            ReentrantReadWriteLock l = locks[Long.numberOfTrailingZeros(m)];
            if (write) {
                l.writeLock().unlock();
            } else {
                l.readLock().unlock();
            }
        }
    }
}
