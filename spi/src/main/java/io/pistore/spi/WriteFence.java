package io.pistore.spi;

/**
 * Which host stream sent a write, and on which of its connections: a replicated target uses it to
 * drop a stale copy of a write that the host has since sent again on a newer connection.
 *
 * <p>A host queue that moves to another connection (a reconnect, a failover, a move to the optimized
 * peer) may send again a write it had no answer for. The first copy can still be on its way: in the
 * socket buffer of a peer that was frozen, or in the log of a leader that stepped down and forwards
 * it when it comes back. Should that copy be applied after the host's second copy was answered and
 * the host wrote the blocks again, the later data would be lost. So each connection of a host queue
 * carries the queue's {@link #key} and an {@link #epoch} one above that of the connection before it;
 * a replicated volume remembers, per key, the highest epoch it applied, in log order on every
 * replica, and refuses a write of a lower one with {@link Status#FENCED} (the host sends it again on
 * its current connection, whose epoch is the highest).
 *
 * <p>A write whose first copy was applied before its second copy arrived must not be applied again:
 * another host may have written those blocks in between, and the second copy would undo that write.
 * So each write of a queue also carries a {@link #seq}uence number, given when the queue first sends
 * it and kept by every copy; a replicated volume remembers the numbers it admitted lately per key
 * and answers a copy of one of them as done, without applying it.
 *
 * <p>A write may also say which version of the volume's shared state its sender checked it against
 * ({@link #view}, {@link SharedVolumeState}): a volume that keeps such a state refuses it with
 * {@link Status#VIEW_CHANGED} once the state has another version. Only in-process frontends set it
 * (the wire protocols do not carry it).
 *
 * @param key   the host queue's stream, random per queue; never 0 (0 on the wire means "no fence")
 * @param epoch the connection's number in that stream, from 1, one higher at each new connection
 * @param seq   the write's number in that stream, from 1, the same in every copy; 0: none (a host
 *              or transport that does not number its writes)
 * @param view  the version of the volume's shared state the write was checked against plus one (a
 *              state never set has version 0, its view is 1); 0: not checked against one (the
 *              write goes whatever the state)
 */
public record WriteFence(long key, long epoch, long seq, long view) {
    public WriteFence {
        if (key == 0) {
            throw new IllegalArgumentException("a write fence's key is never 0");
        }
        if (epoch < 1) {
            throw new IllegalArgumentException("a write fence's epoch starts at 1, not " + epoch);
        }
        if (seq < 0) {
            throw new IllegalArgumentException("a write's sequence number is 0 (none) or more, not " + seq);
        }
        if (view < 0) {
            throw new IllegalArgumentException("a write's shared-state view is 0 (none) or more, not " + view);
        }
    }

    /** A fence with a sequence number and no shared-state view. */
    public WriteFence(long key, long epoch, long seq) {
        this(key, epoch, seq, 0);
    }

    /** A fence without a sequence number. */
    public WriteFence(long key, long epoch) {
        this(key, epoch, 0);
    }

    /** This fence for the write numbered {@code n} (0: none). */
    public WriteFence withSeq(long n) {
        return n == seq ? this : new WriteFence(key, epoch, n, view);
    }

    /** This fence for a write checked against version {@code v} of the volume's shared state (0: none). */
    public WriteFence withView(long v) {
        return v == view ? this : new WriteFence(key, epoch, seq, v);
    }

    /** The fence of key {@code key} and epoch {@code epoch} as read from a wire, or null for key 0 (none). */
    public static WriteFence ofWire(long key, long epoch) {
        return ofWire(key, epoch, 0);
    }

    /** As {@link #ofWire(long, long)}, with the write's sequence number (0: none). */
    public static WriteFence ofWire(long key, long epoch, long seq) {
        return key == 0 ? null : new WriteFence(key, Math.max(1, epoch), Math.max(0, seq));
    }

    /**
     * {@code last} when it is the fence of {@code key} and {@code epoch}, else that fence as read from
     * a wire ({@link #ofWire}): a target's connection keeps one object while its host's fence stays.
     */
    public static WriteFence reuse(WriteFence last, long key, long epoch) {
        return reuse(last, key, epoch, 0);
    }

    /** As {@link #reuse(WriteFence, long, long)}, with the write's sequence number. */
    public static WriteFence reuse(WriteFence last, long key, long epoch, long seq) {
        return last != null && last.key == key && last.epoch == epoch && last.seq == seq && last.view == 0 ? last
                : ofWire(key, epoch, seq);
    }

    @Override
    public String toString() {
        return "fence " + Long.toHexString(key) + "/" + epoch + (seq != 0 ? " #" + seq : "")
                + (view != 0 ? " view " + view : "");
    }
}
