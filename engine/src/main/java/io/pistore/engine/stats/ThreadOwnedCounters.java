package io.pistore.engine.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A row of counters that threads add to without atomic instructions: each thread adds to a shard of
 * its own with plain (opaque) stores, and a reader sums the shards. An atomic add costs a locked
 * instruction on every request; a thread's own slot costs a load and a store. A shard whose thread
 * has ended is folded into one retired row when read, so threads that come and go (a worker per
 * connection) do not pile up shards.
 */
final class ThreadOwnedCounters {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);

    private record Shard(WeakReference<Thread> owner, long[] slots) {
    }

    private final int size;
    private final ThreadLocal<long[]> mine;
    /** Every live thread's shard (guarded by this). */
    private final List<Shard> shards = new ArrayList<>();
    /** What ended threads counted (guarded by this). */
    private final long[] retired;

    ThreadOwnedCounters(int size) {
        this.size = size;
        this.retired = new long[size];
        this.mine = ThreadLocal.withInitial(this::newShard);
    }

    private long[] newShard() {
        long[] slots = new long[size];
        synchronized (this) {
            shards.add(new Shard(new WeakReference<>(Thread.currentThread()), slots));
        }
        return slots;
    }

    /** The calling thread's shard: taken once per event, then added to with {@link #add}. */
    long[] shard() {
        return mine.get();
    }

    /** Adds {@code v} to slot {@code i} of the calling thread's own {@code shard}. */
    static void add(long[] shard, int i, long v) {
        // only the owner writes: opaque keeps each store whole and visible to readers, without a fence
        SLOT.setOpaque(shard, i, (long) SLOT.getOpaque(shard, i) + v);
    }

    /** The sums of slots {@code from} to {@code from + out.length - 1} into {@code out}. */
    synchronized void sum(int from, long[] out) {
        foldEnded();
        for (int k = 0; k < out.length; k++) {
            out[k] = retired[from + k];
        }
        for (Shard s : shards) {
            for (int k = 0; k < out.length; k++) {
                out[k] += (long) SLOT.getOpaque(s.slots, from + k);
            }
        }
    }

    long sum(int i) {
        long[] one = new long[1];
        sum(i, one);
        return one[0];
    }

    /**
     * Moves the shards of threads that have ended into the retired row. A thread that has ended
     * writes no more, and its writes happen-before another thread sees it ended.
     */
    private void foldEnded() {
        for (Iterator<Shard> it = shards.iterator(); it.hasNext(); ) {
            Shard s = it.next();
            Thread t = s.owner().get();
            if (t == null || !t.isAlive()) {
                for (int i = 0; i < size; i++) {
                    retired[i] += s.slots()[i];
                }
                it.remove();
            }
        }
    }
}
