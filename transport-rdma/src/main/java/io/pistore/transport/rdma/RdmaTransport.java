package io.pistore.transport.rdma;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.transport.rdma.internal.RdmaHostConnection;
import io.pistore.transport.rdma.internal.RdmaTarget;
import io.pistore.transport.rdma.internal.ReconnectScheduler;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.io.IOException;

/** The rdma transport over one verbs device of the selected provider. */
public final class RdmaTransport implements BlockTransport {
    private final VerbsProvider provider;
    private final RdmaOptions options;
    private VerbsDevice device;
    /** The thread its host queues reconnect on (made when the first queue loses its connection). */
    private final ReconnectScheduler reconnects = new ReconnectScheduler();

    public RdmaTransport(VerbsProvider provider, RdmaOptions options) {
        this.provider = provider;
        this.options = options;
    }

    /** The verbs provider in use: soft or disni. */
    public String providerName() {
        return provider.name();
    }

    private synchronized VerbsDevice device() throws IOException {
        if (device == null) {
            device = provider.open(options.all());
        }
        return device;
    }

    @Override
    public TargetListener listen(String address, TargetHandler handler) throws IOException {
        return new RdmaTarget(device(), address, handler, options.pi() != RdmaOptions.PiMode.CPU, 0, options.pathStates());
    }

    @Override
    public HostConnection connect(String address, ConnectOptions options) throws IOException {
        return new RdmaHostConnection(provider.name(), device(), this.options, address, options, reconnects);
    }

    @Override
    public synchronized void close() {
        reconnects.close();
        if (device != null) {
            device.close();
            device = null;
        }
    }
}
