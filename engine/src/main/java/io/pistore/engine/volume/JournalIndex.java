package io.pistore.engine.volume;

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

    private Table table(long lba) {
        return tables[(int) Math.floorMod(lba, (long) STRIPES)];
    }

    /** Records that {@code lba}'s newest version is in record {@code seq}; {@code dataPos < 0}: zeroed. */
    void put(long lba, long seq, long dataPos, long metaPos) {
        Table t = table(lba);
        synchronized (t) {
            if (t.put(lba, seq, dataPos, metaPos)) {
                entries.incrementAndGet();
            }
        }
    }

    /**
     * Fills {@code out} with {@code lba}'s entry (sequence number, data position, metadata position)
     * and returns its sequence number, or returns {@link #ABSENT} and leaves {@code out} alone.
     */
    long lookUp(long lba, long[] out) {
        Table t = table(lba);
        synchronized (t) {
            int i = t.find(lba);
            if (i < 0) {
                return ABSENT;
            }
            if (out != null) {
                out[0] = t.seqs[i];
                out[1] = t.dataPos[i];
                out[2] = t.metaPos[i];
            }
            return t.seqs[i];
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

    /** Linear probing, deletion by shifting back (no tombstones), at most half full. */
    private static final class Table {
        private static final int INITIAL = 16;
        private static final long EMPTY = -1; // no LBA is negative
        long[] keys;
        long[] seqs;
        long[] dataPos;
        long[] metaPos;
        int size;

        Table() {
            allocate(INITIAL);
        }

        private void allocate(int capacity) {
            keys = new long[capacity];
            java.util.Arrays.fill(keys, EMPTY);
            seqs = new long[capacity];
            dataPos = new long[capacity];
            metaPos = new long[capacity];
            size = 0;
        }

        private int mask() {
            return keys.length - 1;
        }

        private static int hash(long lba) {
            long h = lba * 0x9E3779B97F4A7C15L; // Fibonacci hashing: LBAs of one stripe differ by multiples of 64
            return (int) (h ^ (h >>> 32));
        }

        int find(long lba) {
            int m = mask();
            for (int i = hash(lba) & m; ; i = (i + 1) & m) {
                long k = keys[i];
                if (k == lba) {
                    return i;
                }
                if (k == EMPTY) {
                    return -1;
                }
            }
        }

        /** Returns whether {@code lba} was new here. */
        boolean put(long lba, long seq, long d, long mp) {
            if (2 * (size + 1) > keys.length) {
                grow();
            }
            int m = mask();
            int i = hash(lba) & m;
            while (keys[i] != EMPTY && keys[i] != lba) {
                i = (i + 1) & m;
            }
            boolean added = keys[i] == EMPTY;
            if (added) {
                keys[i] = lba;
                size++;
            }
            seqs[i] = seq;
            dataPos[i] = d;
            metaPos[i] = mp;
            return added;
        }

        private void grow() {
            long[] k = keys;
            long[] s = seqs;
            long[] d = dataPos;
            long[] mp = metaPos;
            allocate(k.length * 2);
            for (int i = 0; i < k.length; i++) {
                if (k[i] != EMPTY) {
                    put(k[i], s[i], d[i], mp[i]);
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
            while (i < keys.length) {
                if (keys[i] != EMPTY && seqs[i] <= lastSeq) {
                    removeAt(i);
                } else {
                    i++;
                }
            }
        }

        private void removeAt(int hole) {
            int m = mask();
            keys[hole] = EMPTY;
            size--;
            for (int i = (hole + 1) & m; keys[i] != EMPTY; i = (i + 1) & m) {
                int home = hash(keys[i]) & m;
                // Move entry i into the hole if its home slot is not cyclically in (hole, i].
                boolean stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
                if (!stays) {
                    keys[hole] = keys[i];
                    seqs[hole] = seqs[i];
                    dataPos[hole] = dataPos[i];
                    metaPos[hole] = metaPos[i];
                    keys[i] = EMPTY;
                    hole = i;
                }
            }
        }

        void clear() {
            if (size > 0 || keys.length > INITIAL) {
                allocate(INITIAL);
            }
        }
    }
}
