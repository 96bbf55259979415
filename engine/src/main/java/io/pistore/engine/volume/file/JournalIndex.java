package io.pistore.engine.volume.file;

/**
 * Which blocks have their newest version only in the journal, and where: LBA to (sequence number
 * of the record, data position, metadata position). One open-addressing table of primitive longs
 * per stripe of LBAs, each behind its own monitor, so a put, a lookup or a checkpoint's removal
 * allocates nothing and touches one stripe. Measured against a {@code ConcurrentHashMap<Long, …>}
 * of records: its boxing on every put and lookup and a removal pass over every entry object took
 * about a quarter of the CPU of a random-write run.
 *
 * <p>The monitors are the index's own, not the volume's block locks: a checkpoint looks blocks up
 * while a writer that holds every block lock may be waiting for that checkpoint.
 */
final class JournalIndex {
    /** The volume's block locks have as many stripes; any number works here. */
    private static final int STRIPES = 64;
    /** Neighbouring LBAs that share a stripe: 2^6. */
    private static final int STRIPE_RUN_BITS = 6;
    /** What {@link #lookUp} returns for a block not in the journal. */
    static final long ABSENT = Long.MIN_VALUE;

    private final Table[] tables = new Table[STRIPES];
    /**
     * Entries in all tables. Changed inside the stripe's monitor, before a writer releases its block
     * lock, so a reader holding that block's lock that sees zero knows the block is not here.
     */
    private final java.util.concurrent.atomic.AtomicLong entries = new java.util.concurrent.atomic.AtomicLong();

    JournalIndex() {
        for (int i = 0; i < STRIPES; i++) {
            tables[i] = new Table();
        }
    }

    /**
     * The stripe of {@code lba}: runs of 64 neighbouring LBAs share one, so a multi-block write
     * takes a few monitors, not one per block.
     */
    private Table table(long lba) {
        return tables[(int) Math.floorMod(lba >>> STRIPE_RUN_BITS, (long) STRIPES)];
    }

    /**
     * Records that the {@code blocks} blocks from {@code lba} have their newest version in record
     * {@code seq}, block {@code i}'s data at {@code dataAt + i * dataSize} and metadata at {@code
     * metaAt + i * metaSize} ({@code dataAt < 0}: zeroed). Each stripe's monitor is taken once for the
     * blocks in it, and the count of entries changed once per stripe, not per block.
     */
    void putRun(long lba, int blocks, long seq, long dataAt, int dataSize, long metaAt, int metaSize) {
        int i = 0;
        while (i < blocks) {
            long first = lba + i;
            // the blocks up to the end of this run of neighbours share its stripe
            int n = (int) Math.min(blocks - i, (1L << STRIPE_RUN_BITS) - (first & ((1L << STRIPE_RUN_BITS) - 1)));
            Table t = table(first);
            int added = 0;
            synchronized (t) {
                for (int k = i; k < i + n; k++) {
                    boolean isNew = dataAt < 0 ? t.put(lba + k, seq, -1, -1)
                            : t.put(lba + k, seq, dataAt + (long) k * dataSize, metaAt + (long) k * metaSize);
                    if (isNew) {
                        added++;
                    }
                }
                if (added > 0) {
                    entries.addAndGet(added);
                }
            }
            i += n;
        }
    }

    /**
     * Fills {@code out} with {@code lba}'s entry (sequence number, data position, metadata position)
     * and returns its sequence number, or returns {@link #ABSENT} and leaves {@code out} alone.
     */
    long lookUp(long lba, long[] out) {
        Table t = table(lba);
        synchronized (t) {
            int at = t.find(lba);
            if (at < 0) {
                return ABSENT;
            }
            if (out != null) {
                out[0] = t.seq(at);
                out[1] = t.dataPos(at);
                out[2] = t.metaPos(at);
            }
            return t.seq(at);
        }
    }

    /** The sequence number of {@code lba}'s entry, or {@link #ABSENT}. */
    long seqOf(long lba) {
        return lookUp(lba, null);
    }

    /** Drops every entry of a record up to {@code lastSeq} (applied to the home files and forced there). */
    void removeUpTo(long lastSeq) {
        for (Table t : tables) {
            synchronized (t) {
                int before = t.size;
                t.removeUpTo(lastSeq);
                entries.addAndGet(t.size - before);
            }
        }
    }

    void clear() {
        for (Table t : tables) {
            synchronized (t) {
                entries.addAndGet(-t.size);
                t.clear();
            }
        }
    }

    /**
     * Whether no block is in the journal: exact for blocks whose lock the caller holds (their puts
     * came before it took the lock); others may be on their way in.
     */
    boolean isEmpty() {
        return entries.get() == 0;
    }

    /** Blocks in the index (exact for those whose lock the caller holds). */
    long size() {
        return entries.get();
    }

    /**
     * Linear probing, deletion by shifting back (no tombstones), at most half full. A slot is four
     * longs side by side (LBA, sequence number, data position, metadata position), so a put or a
     * lookup touches one cache line, not four arrays.
     */
    private static final class Table {
        private static final int INITIAL = 16;
        private static final long EMPTY = -1; // no LBA is negative
        long[] slots;
        int size;

        Table() {
            allocate(INITIAL);
        }

        private void allocate(int capacity) {
            slots = new long[4 * capacity];
            for (int i = 0; i < slots.length; i += 4) {
                slots[i] = EMPTY;
            }
            size = 0;
        }

        private int capacity() {
            return slots.length >> 2;
        }

        /** Neighbouring LBAs whose home slots are side by side (2^3): a multi-block write fills whole cache lines. */
        private static final int RUN_BITS = 3;

        /**
         * The home slot (before masking): a scattered place for each run of 2^{@link #RUN_BITS} LBAs
         * (Fibonacci hashing of the run's number, folded), the LBAs of a run in the slots after it.
         */
        private static int hash(long lba) {
            long h = (lba >>> RUN_BITS) * 0x9E3779B97F4A7C15L;
            return ((int) (h ^ (h >>> 32)) << RUN_BITS) | (int) (lba & ((1 << RUN_BITS) - 1));
        }

        /** The index in {@code slots} of {@code lba}'s slot, or -1. */
        int find(long lba) {
            int m = capacity() - 1;
            for (int i = hash(lba) & m; ; i = (i + 1) & m) {
                long k = slots[4 * i];
                if (k == lba) {
                    return 4 * i;
                }
                if (k == EMPTY) {
                    return -1;
                }
            }
        }

        long seq(int at) {
            return slots[at + 1];
        }

        long dataPos(int at) {
            return slots[at + 2];
        }

        long metaPos(int at) {
            return slots[at + 3];
        }

        /** Returns whether {@code lba} was new here. */
        boolean put(long lba, long seq, long d, long mp) {
            if (2 * (size + 1) > capacity()) {
                grow();
            }
            int m = capacity() - 1;
            int i = hash(lba) & m;
            while (slots[4 * i] != EMPTY && slots[4 * i] != lba) {
                i = (i + 1) & m;
            }
            int at = 4 * i;
            boolean added = slots[at] == EMPTY;
            if (added) {
                slots[at] = lba;
                size++;
            }
            slots[at + 1] = seq;
            slots[at + 2] = d;
            slots[at + 3] = mp;
            return added;
        }

        private void grow() {
            long[] old = slots;
            allocate(2 * capacity());
            for (int at = 0; at < old.length; at += 4) {
                if (old[at] != EMPTY) {
                    put(old[at], old[at + 1], old[at + 2], old[at + 3]);
                }
            }
        }

        void removeUpTo(long lastSeq) {
            if (size == 0) {
                return;
            }
            // A removal shifts later entries of the probe run back into the freed slot, so the same
            // slot is looked at again; entries only move backwards, so none is skipped (one that
            // wraps to the end may be looked at twice, which the test allows).
            int i = 0;
            int n = capacity();
            while (i < n) {
                if (slots[4 * i] != EMPTY && slots[4 * i + 1] <= lastSeq) {
                    removeAt(i);
                } else {
                    i++;
                }
            }
        }

        private void removeAt(int hole) {
            int m = capacity() - 1;
            slots[4 * hole] = EMPTY;
            size--;
            for (int i = (hole + 1) & m; slots[4 * i] != EMPTY; i = (i + 1) & m) {
                int home = hash(slots[4 * i]) & m;
                // Move entry i into the hole if its home slot is not cyclically in (hole, i].
                boolean stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
                if (!stays) {
                    System.arraycopy(slots, 4 * i, slots, 4 * hole, 4);
                    slots[4 * i] = EMPTY;
                    hole = i;
                }
            }
        }

        void clear() {
            if (size > 0 || capacity() > INITIAL) {
                allocate(INITIAL);
            }
        }
    }
}
