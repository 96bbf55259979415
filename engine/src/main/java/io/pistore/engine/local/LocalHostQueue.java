package io.pistore.engine.local;

import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.concurrent.locks.LockSupport;
import java.util.Queue;
import org.jctools.queues.MpscArrayQueue;

/**
 * A host queue of the local transport: any thread submits into a bounded multi-producer,
 * single-consumer queue (JCTools), drained by one worker thread that runs the target handler. The
 * worker parks when idle; a producer unparks it only if it announced that it sleeps.
 *
 * <p>{@link #submitMayCompleteOnCaller} skips the worker: the request runs on the submitting
 * thread, unless that thread is already running one inline further up its stack (a completion that
 * chains its next request), in which case the nested request goes through the queue and the worker.
 * So inline execution nests at most one level on any thread, whatever the caller chains.
 */
final class LocalHostQueue implements HostQueue {
    private final TargetHandler handler;
    private final int depth;
    /** JCTools' bounded MPSC array queue: submitters on many threads, one worker draining. */
    private final Queue<Pending> queue;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Thread worker;
    private volatile boolean sleeping;
    private volatile boolean closed;
    private boolean workerExited;

    /**
     * A queued request: its completion goes to {@code done} when there is one, else to the future;
     * once (the flag: finished).
     */
    private static final class Pending extends AtomicBoolean {
        final BlockRequest request;
        final CompletableFuture<Completion> future;
        final Consumer<Completion> done;

        Pending(BlockRequest request, Consumer<Completion> done) {
            this.request = request;
            this.done = done;
            this.future = done == null ? new CompletableFuture<>() : null;
        }
    }

    LocalHostQueue(String name, TargetHandler handler, int depth) {
        this.handler = handler;
        this.depth = depth;
        this.queue = new MpscArrayQueue<>(Math.max(2, depth));
        this.worker = new Thread(this::drain, "pistore-local-" + name);
        this.worker.setDaemon(true);
        this.worker.start();
    }

    @Override
    public CompletableFuture<Completion> submit(BlockRequest request) {
        Completion refused = refusal();
        if (refused != null) {
            return CompletableFuture.completedFuture(refused);
        }
        Pending p = new Pending(request, null);
        refused = enqueue(p);
        return refused != null ? CompletableFuture.completedFuture(refused) : p.future;
    }

    /** Null when a slot was taken for a request, else why it is refused (nothing taken). */
    private Completion refusal() {
        if (closed) {
            return Completion.failure(Status.TRANSPORT_ERROR, "connection closed");
        }
        if (inFlight.incrementAndGet() > depth) {
            inFlight.decrementAndGet();
            return Completion.failure(Status.QUEUE_FULL, "queue depth " + depth + " reached");
        }
        return null;
    }

    /** Hands a request that holds a slot to the worker; null, or why it was refused (slot given back). */
    private Completion enqueue(Pending p) {
        if (!queue.offer(p)) {
            // Cannot happen while inFlight bounds the queue, but never lose a request silently.
            inFlight.decrementAndGet();
            return Completion.failure(Status.QUEUE_FULL, "queue full");
        }
        if (sleeping) {
            LockSupport.unpark(worker);
        }
        if (closed) {
            // The worker may have made its last pass before our offer: then fail what is left here.
            synchronized (this) {
                if (workerExited) {
                    failQueued();
                }
            }
        }
        return null;
    }

    /** Whether this thread is running a request inline (per thread, across every local queue). */
    private static final ThreadLocal<boolean[]> RUNNING_INLINE = ThreadLocal.withInitial(() -> new boolean[1]);

    /** Calls the caller's {@code done} once, and frees the request's slot first. */
    private final class InlineDone extends AtomicBoolean implements Consumer<Completion> {
        private final Consumer<Completion> done;

        InlineDone(Consumer<Completion> done) {
            this.done = done;
        }

        @Override
        public void accept(Completion c) {
            if (compareAndSet(false, true)) {
                inFlight.decrementAndGet();
                done.accept(c);
            }
        }
    }

    /**
     * Runs the request on the calling thread (and {@code done} there too, unless the target hands
     * the request to a thread of its own, such as a flush waiting for the disk), except when this
     * thread already runs a request inline: then the request is queued to the worker, which calls
     * {@code done} itself, never the caller; so a caller that chains from {@code done} nests one
     * level. A refusal (queue full, connection closed) is reported to {@code done} at once, on the
     * calling thread.
     */
    @Override
    public void submitMayCompleteOnCaller(BlockRequest request, Consumer<Completion> done) {
        Completion refused = refusal();
        if (refused != null) {
            done.accept(refused);
            return;
        }
        boolean[] inline = RUNNING_INLINE.get();
        if (inline[0]) {
            refused = enqueue(new Pending(request, done));
            if (refused != null) {
                done.accept(refused);
            }
            return;
        }
        InlineDone once = new InlineDone(done);
        inline[0] = true;
        try {
            handler.execute(request, PiDuty.of(request.protection()), once);
        } catch (RuntimeException e) {
            once.accept(Completion.failure(Status.INTERNAL_ERROR, e.toString()));
        } finally {
            inline[0] = false;
        }
    }

    private void finish(Pending p, Completion c) {
        if (!p.compareAndSet(false, true)) {
            return;
        }
        inFlight.decrementAndGet();
        if (p.done == null) {
            p.future.complete(c);
        } else {
            try {
                p.done.accept(c);
            } catch (RuntimeException e) {
                // the caller's callback failed; the worker goes on with the next request
            }
        }
    }

    private void drain() {
        while (!closed) {
            Pending p = queue.poll();
            if (p != null) {
                try {
                    handler.execute(p.request, PiDuty.of(p.request.protection()), c -> finish(p, c));
                } catch (RuntimeException e) {
                    finish(p, Completion.failure(Status.INTERNAL_ERROR, e.toString()));
                }
                continue;
            }
            sleeping = true;
            if (queue.isEmpty() && !closed) {
                LockSupport.parkNanos(50_000_000);
            }
            sleeping = false;
        }
        synchronized (this) {
            failQueued();
            workerExited = true;
        }
    }

    /** Fails every queued request; only under the lock, by the worker or after it exited (one consumer). */
    private void failQueued() {
        Pending p;
        while ((p = queue.poll()) != null) {
            finish(p, Completion.failure(Status.TRANSPORT_ERROR, "connection closed before the request ran"));
        }
    }

    @Override
    public int depth() {
        return depth;
    }

    @Override
    public int inFlight() {
        return inFlight.get();
    }

    void close() {
        closed = true;
        LockSupport.unpark(worker);
    }
}
