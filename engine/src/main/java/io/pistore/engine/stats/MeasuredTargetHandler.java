package io.pistore.engine.stats;

import io.pistore.spi.PiDuty;
import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.DelegatingTargetHandler;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * A target handler that counts the requests passing through it into {@link TransportCounters} and
 * hands them on unchanged (every other method passed on by {@link DelegatingTargetHandler}). A PI error the engine reports is placed by the operation: on a write it
 * was caught before storing ({@link PiErrorPlace#TARGET}), on a read the stored block failed its
 * check ({@link PiErrorPlace#REST}); the transport reports its own catches through
 * {@link #piErrorInTransport}.
 *
 * <p>Every request is counted; one in {@code latencySample}, picked at random (so no periodic
 * pattern of the workload lines up with the sample), reads the clock before and after for its
 * latency. The others pass {@code -1} and leave the latency buckets alone.
 */
final class MeasuredTargetHandler extends DelegatingTargetHandler {
    private final TransportCounters counters;
    private final int latencySample;

    MeasuredTargetHandler(TargetHandler delegate, TransportCounters counters, int latencySample) {
        super(delegate);
        this.counters = counters;
        this.latencySample = latencySample;
    }

    @Override
    public void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done) {
        VolumeCounters v = counters.volume(request.volume());
        long bytes = request.data() == null ? 0 : request.data().length();
        // nextInt(1) is 0: every request timed
        long start = ThreadLocalRandom.current().nextInt(latencySample) == 0 ? System.nanoTime() : -1;
        v.started();
        try {
            inner.execute(request, duty, c -> {
                ended(v, request.op(), bytes, request.fua(), since(start), c);
                done.accept(c);
            });
        } catch (RuntimeException e) {
            // the transport answers it with an internal error; it is no longer in flight
            v.ended(request.op(), bytes, request.fua(), since(start), Status.INTERNAL_ERROR);
            throw e;
        }
    }

    /** The nanoseconds since {@code start}, or -1 for a request not timed. */
    private static long since(long start) {
        return start < 0 ? -1 : Math.max(0, System.nanoTime() - start);
    }

    private static void ended(VolumeCounters v, Operation op, long bytes, boolean fua, long nanos, Completion c) {
        Status s = c.status();
        v.ended(op, bytes, fua, nanos, s);
        if (s.isPiError()) {
            v.piError(s.piErrorKind(), op == Operation.READ ? PiErrorPlace.REST : PiErrorPlace.TARGET);
        }
    }

    @Override
    public void piErrorInTransport(String volume, Operation op, PiErrorKind kind) {
        counters.volume(volume).piError(kind, PiErrorPlace.WIRE);
        inner.piErrorInTransport(volume, op, kind);
    }

    @Override
    public void connected(String peer) {
        counters.connected();
        inner.connected(peer);
    }

    @Override
    public void disconnected(String peer, String reason) {
        counters.disconnected();
        inner.disconnected(peer, reason);
    }
}
