package io.pistore.spi;

import io.pistore.integrity.PiErrorKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * A target handler that passes everything on to another one: the base of the handlers that watch
 * requests on their way (counting them for metrics). A method added to {@link TargetHandler} is
 * passed on here once, for every such handler; one passed on nowhere would leave a target that
 * counts its requests without what the method serves.
 */
public abstract class DelegatingTargetHandler implements TargetHandler {
    /** The handler everything is passed on to. */
    protected final TargetHandler inner;

    protected DelegatingTargetHandler(TargetHandler inner) {
        this.inner = inner;
    }

    @Override
    public List<VolumeInfo> volumes() {
        return inner.volumes();
    }

    @Override
    public void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done) {
        inner.execute(request, duty, done);
    }

    @Override
    public void piErrorInTransport(String volume, Operation op, PiErrorKind kind) {
        inner.piErrorInTransport(volume, op, kind);
    }

    @Override
    public boolean readsMetadataOnly() {
        return inner.readsMetadataOnly();
    }

    @Override
    public PathState pathState(String volume) {
        return inner.pathState(volume);
    }

    @Override
    public PathGroup pathGroup(String volume) {
        return inner.pathGroup(volume);
    }

    @Override
    public void optimizePath(String volume, String replicaId) throws java.io.IOException {
        inner.optimizePath(volume, replicaId);
    }

    @Override
    public SharedVolumeState sharedState(String volume) {
        return inner.sharedState(volume);
    }

    @Override
    public OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        return inner.orderedCompareAndWrite(volume);
    }

    @Override
    public void connected(String peer) {
        inner.connected(peer);
    }

    @Override
    public void disconnected(String peer, String reason) {
        inner.disconnected(peer, reason);
    }
}
