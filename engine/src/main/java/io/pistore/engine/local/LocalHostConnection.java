package io.pistore.engine.local;

import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.util.List;

final class LocalHostConnection implements HostConnection {
    private final TargetHandler handler;
    private final LocalHostQueue[] queues;

    LocalHostConnection(String address, TargetHandler handler, ConnectOptions options) {
        this.handler = handler;
        this.queues = new LocalHostQueue[options.queues()];
        for (int i = 0; i < queues.length; i++) {
            queues[i] = new LocalHostQueue(address + "/q" + i, handler, options.queueDepth());
        }
    }

    @Override
    public List<VolumeInfo> volumes() {
        return handler.volumes();
    }

    @Override
    public int queueCount() {
        return queues.length;
    }

    @Override
    public HostQueue queue(int index) {
        return queues[index];
    }

    /** In one process the request reaches the target as it is: whatever the target serves. */
    @Override
    public boolean readsMetadataOnly() {
        return handler.readsMetadataOnly();
    }

    @Override
    public io.pistore.spi.SharedVolumeState sharedState(String volume) {
        return handler.sharedState(volume);
    }

    @Override
    public io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        return handler.orderedCompareAndWrite(volume);
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup(String volume) {
        return handler.pathGroup(volume);
    }

    @Override
    public void optimizePath(String volume, String replicaId) throws java.io.IOException {
        handler.optimizePath(volume, replicaId);
    }

    @Override
    public void close() {
        for (LocalHostQueue q : queues) {
            q.close();
        }
    }
}
