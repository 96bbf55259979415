package io.pistore.engine.stats;

import io.pistore.spi.PiDuty;
import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * A target handler that counts the requests passing through it into {@link TransportCounters} and
 * hands them on unchanged. A PI error the engine reports is placed by the operation: on a write it
 * was caught before storing ({@link PiErrorPlace#TARGET}), on a read the stored block failed its
 * check ({@link PiErrorPlace#REST}); the transport reports its own catches through
 * {@link #piErrorInTransport}.
 *
 * <p>Every request is counted; one in {@code latencySample}, picked at random (so no periodic
 * pattern of the workload lines up with the sample), reads the clock before and after for its
 * latency. The others pass {@code -1} and leave the latency buckets alone.
 */
final class MeasuredTargetHandler implements TargetHandler {
    private final TargetHandler delegate;
    private final TransportCounters counters;
    private final int latencySample;

    MeasuredTargetHandler(TargetHandler delegate, TransportCounters counters, int latencySample) {
        this.delegate = delegate;
        this.counters = counters;
        this.latencySample = latencySample;
    }

    @Override
    public List<VolumeInfo> volumes() {
        return delegate.volumes();
    }

    @Override
    public boolean readsMetadataOnly() {
        return delegate.readsMetadataOnly();
    }

    @Override
    public io.pistore.spi.PathState pathState(String volume) {
        return delegate.pathState(volume);
    }

    @Override
    public io.pistore.spi.SharedVolumeState sharedState(String volume) {
        return delegate.sharedState(volume);
    }

    @Override
    public io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        return delegate.orderedCompareAndWrite(volume);
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup(String volume) {
        return delegate.pathGroup(volume);
    }

    @Override
    public void optimizePath(String volume, String replicaId) throws java.io.IOException {
        delegate.optimizePath(volume, replicaId);
    }

    @Override
    public void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done) {
        VolumeCounters v = counters.volume(request.volume());
        long bytes = request.data() == null ? 0 : request.data().length();
        // nextInt(1) is 0: every request timed
        long start = ThreadLocalRandom.current().nextInt(latencySample) == 0 ? System.nanoTime() : -1;
        v.started();
        try {
            delegate.execute(request, duty, c -> {
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
        delegate.piErrorInTransport(volume, op, kind);
    }

    @Override
    public void connected(String peer) {
        counters.connected();
        delegate.connected(peer);
    }

    @Override
    public void disconnected(String peer, String reason) {
        counters.disconnected();
        delegate.disconnected(peer, reason);
    }
}
