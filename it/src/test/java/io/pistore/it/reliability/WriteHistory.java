package io.pistore.it.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a host sent to each block during one kill point, as the host saw it: every write (a version,
 * whether it was FUA) in the order sent, when it was acknowledged on one logical clock, and when
 * the last completed flush started. From that, {@link #allowed} tells which versions a block may
 * hold after a crash:
 * <ul>
 *   <li>its <b>durable</b> version: the last write acknowledged before the start of the last
 *       completed flush, or the last acknowledged FUA write, whichever came later (or, when there is
 *       none, what the block held when the kill point began);
 *   <li>or any write sent after that one, acknowledged or still in flight at the kill;
 *   <li>nothing older, and nothing that is not one complete version.
 * </ul>
 * Each block is written by one writer thread at a time, so its list is in the order of the
 * acknowledgements.
 */
final class WriteHistory {
    static final long NEVER = Long.MAX_VALUE;

    /** One block's part of one write request. */
    static final class Write {
        final long version;
        final boolean fua;
        volatile long ackedAt = NEVER;

        Write(long version, boolean fua) {
            this.version = version;
            this.fua = fua;
        }

        boolean acked() {
            return ackedAt != NEVER;
        }
    }

    /** The versions block may hold, oldest first; the first is the durable one. */
    record Allowed(List<Long> versions, boolean durableWrittenNow) {
        /** Only one version is possible: the block must read back exactly that. */
        boolean settled() {
            return versions.size() == 1;
        }
    }

    private final List<List<Write>> blocks = new ArrayList<>();
    private final AtomicLong clock = new AtomicLong();
    private final AtomicLong lastFlushStart = new AtomicLong(-1);

    WriteHistory(int blockCount) {
        for (int i = 0; i < blockCount; i++) {
            blocks.add(new ArrayList<>());
        }
    }

    /** Records a request to blocks {@code lba..} with these versions, before it is sent. */
    Write[] sending(long lba, long[] versions, boolean fua) {
        Write[] w = new Write[versions.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = new Write(versions[i], fua);
            List<Write> h = blocks.get((int) lba + i);
            synchronized (h) {
                h.add(w[i]);
            }
        }
        return w;
    }

    void acknowledged(Write[] writes) {
        long now = clock.incrementAndGet();
        for (Write w : writes) {
            w.ackedAt = now;
        }
    }

    /** The request was refused before it left the host (queue full): it can have changed nothing. */
    void notSent(long lba, Write[] writes) {
        for (int i = 0; i < writes.length; i++) {
            List<Write> h = blocks.get((int) lba + i);
            synchronized (h) {
                h.remove(writes[i]);
            }
        }
    }

    /** A flush is about to be sent; pass the result to {@link #flushed} once it completed. */
    long flushStarting() {
        return clock.incrementAndGet();
    }

    void flushed(long start) {
        lastFlushStart.accumulateAndGet(start, Math::max);
    }

    long acknowledgedWrites() {
        long n = 0;
        for (List<Write> h : blocks) {
            synchronized (h) {
                n += h.stream().filter(Write::acked).count();
            }
        }
        return n;
    }

    /** The versions block {@code lba} may hold; {@code before} is what it held when the kill point began. */
    Allowed allowed(int lba, long before) {
        List<Write> h;
        synchronized (blocks.get(lba)) {
            h = new ArrayList<>(blocks.get(lba));
        }
        long flushStart = lastFlushStart.get();
        int durable = -1;
        for (int i = 0; i < h.size(); i++) {
            Write w = h.get(i);
            if (w.ackedAt < flushStart || (w.fua && w.acked())) {
                durable = i;
            }
        }
        List<Long> versions = new ArrayList<>();
        versions.add(durable >= 0 ? h.get(durable).version : before);
        for (int i = durable + 1; i < h.size(); i++) {
            versions.add(h.get(i).version);
        }
        return new Allowed(versions, durable >= 0);
    }
}
