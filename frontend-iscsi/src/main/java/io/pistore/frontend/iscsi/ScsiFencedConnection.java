package io.pistore.frontend.iscsi;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.DelegatingHostConnection;
import io.pistore.spi.HostConnection;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Operation;
import io.pistore.spi.OrderedCompareAndWrite;
import io.pistore.spi.Status;
import io.pistore.spi.WriteFence;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The connection a unit whose reservations other ports share ({@link ScsiSharedReservations}) sends
 * its requests on: each write, zero write and deallocation is checked against the reservations as
 * it leaves, for the I_T nexus whose command sends it ({@link #NEXUS}), and carries the version it
 * was checked against ({@link WriteFence#view}). The volume refuses it once the reservations have
 * changed ({@link Status#VIEW_CHANGED}), on every replica alike; it is then checked again once this
 * port has the newer state and sent again, or answered VIEW_CHANGED, which a unit answers as
 * RESERVATION CONFLICT. So a write checked before a PREEMPT on any port never lands after it.
 * The volume's compare-and-write goes the same way; reads and flushes pass as they are.
 */
final class ScsiFencedConnection extends DelegatingHostConnection {
    /**
     * The initiator port whose command runs on this thread, set by the unit around a command's
     * engine requests; a write sent without one goes unchecked.
     */
    static final ThreadLocal<String> NEXUS = new ThreadLocal<>();
    /** How often a write refused for a changed state is checked and sent again before it is answered VIEW_CHANGED. */
    static final int MAX_RESENDS = 8;

    private final ScsiReservations reservations;
    /** This unit's stream of writes: a key of its own, epoch 1 (it never moves to another connection). */
    private final long key = new java.security.SecureRandom().nextLong() | 1L;

    ScsiFencedConnection(HostConnection real, ScsiReservations reservations) {
        super(real);
        this.reservations = reservations;
    }

    /**
     * The volume's compare-and-write, checked and sent as this unit's writes are: against the
     * reservations for the nexus of the calling thread, again once this port has a newer state while
     * the volume refuses it for a changed one; held off, it fails with a
     * {@link io.pistore.engine.volume.ViewChangedException}.
     */
    @Override
    public OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        OrderedCompareAndWrite o = super.orderedCompareAndWrite(volume);
        return o == null ? null : (lba, n, verify, verifyMetadata, mask, data, metadata, fua, fence) -> {
            String nexus = NEXUS.get();
            return nexus == null ? o.compareAndWrite(lba, n, verify, verifyMetadata, mask, data, metadata, fua, fence)
                    : fenced(o, nexus, 0, lba, n, verify, verifyMetadata, mask, data, metadata, fua);
        };
    }

    private CompletableFuture<Long> fenced(OrderedCompareAndWrite o, String nexus, int resends, long lba, int n,
            byte[] verify, byte[] verifyMetadata, byte[] mask, ScatterList data, ScatterList metadata, boolean fua) {
        long view = reservations.writeView(nexus);
        if (view < 0) {
            return CompletableFuture.failedFuture(new io.pistore.engine.volume.ViewChangedException(
                    "reservation conflict for " + nexus));
        }
        WriteFence fence = new WriteFence(key, 1, 0, view);
        return o.compareAndWrite(lba, n, verify, verifyMetadata, mask, data, metadata, fua, fence).handle((r, t) -> {
            Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
            if (!(c instanceof io.pistore.engine.volume.ViewChangedException) || resends >= MAX_RESENDS) {
                return c == null ? CompletableFuture.completedFuture(r) : CompletableFuture.<Long>failedFuture(c);
            }
            // off the completing thread, as a write's resend
            return CompletableFuture.runAsync(() -> reservations.awaitNewer(view))
                    .thenCompose(x -> fenced(o, nexus, resends + 1, lba, n, verify, verifyMetadata, mask, data, metadata, fua));
        }).thenCompose(f -> f);
    }

    @Override
    protected HostQueue wrap(int index, HostQueue q) {
        return new Queue(q);
    }

    /** Runs {@code r} with {@code nexus} as the sender of the engine requests it makes on this thread. */
    static <T> T as(String nexus, java.util.function.Supplier<T> r) {
        String was = NEXUS.get();
        NEXUS.set(nexus);
        try {
            return r.get();
        } finally {
            if (was == null) {
                NEXUS.remove();
            } else {
                NEXUS.set(was);
            }
        }
    }

    private final class Queue implements HostQueue {
        private final HostQueue q;

        Queue(HostQueue q) {
            this.q = q;
        }

        @Override
        public CompletableFuture<Completion> submit(BlockRequest r) {
            CompletableFuture<Completion> f = new CompletableFuture<>();
            submitMayCompleteOnCaller(r, f::complete);
            return f;
        }

        @Override
        public void submitMayCompleteOnCaller(BlockRequest r, Consumer<Completion> done) {
            String nexus = NEXUS.get();
            if (nexus == null || r.op() == Operation.READ || r.op() == Operation.FLUSH) {
                q.submitMayCompleteOnCaller(r, done);
                return;
            }
            send(r, nexus, 0, done);
        }

        private void send(BlockRequest r, String nexus, int resends, Consumer<Completion> done) {
            long view = reservations.writeView(nexus);
            if (view < 0) {
                done.accept(Completion.failure(Status.VIEW_CHANGED, "reservation conflict for " + nexus));
                return;
            }
            q.submitMayCompleteOnCaller(r.withFence(new WriteFence(key, 1, 0, view)), c -> {
                if (c.status() != Status.VIEW_CHANGED || resends >= MAX_RESENDS) {
                    done.accept(c);
                    return;
                }
                // off the completing thread: waiting for the newer state must not hold up the engine's
                CompletableFuture.runAsync(() -> {
                    reservations.awaitNewer(view);
                    send(r, nexus, resends + 1, done);
                });
            });
        }

        @Override
        public int depth() {
            return q.depth();
        }

        @Override
        public int inFlight() {
            return q.inFlight();
        }
    }

    @Override
    public void close() {
        // the server's connection: it closes it
    }
}
