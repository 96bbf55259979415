package io.pistore.replication.volume;

import io.pistore.spi.WriteFence;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A peer's own write stream for one replicated volume (a random key, epoch 1): numbers the writes
 * that came without a host's fence (a frontend on this peer, a host that does not send one), so that
 * a second copy of one in the log (its entry sent again through the client after this leader stepped
 * down with it in its log) is not applied twice ({@code WriteFences}). Thread-safe.
 */
final class OwnWrites {
    private final WriteFence stream = new WriteFence(ThreadLocalRandom.current().nextLong() | 1, 1);
    private final AtomicLong seqs = new AtomicLong();

    /** {@code fence} as it is, or, for a write without one, the next number of this stream. */
    WriteFence numbered(WriteFence fence) {
        return fence != null ? fence : stream.withSeq(seqs.incrementAndGet());
    }
}
