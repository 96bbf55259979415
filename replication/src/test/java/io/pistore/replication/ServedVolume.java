package io.pistore.replication;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import java.io.IOException;

/**
 * A replicated volume served the way every volume is: attached to a target's store, executed by the
 * engine's target service, reached by a host through a transport (the local one) and a BlockDevice.
 */
public final class ServedVolume implements AutoCloseable {
    public final ReplicatedVolume volume;
    public final BlockDevice device;
    private final VolumeStore store;
    private final BlockTransport transport;
    private final TargetListener listener;
    private final HostConnection connection;

    public ServedVolume(ReplicaNode node, String name) throws IOException {
        volume = node.open(name);
        store = VolumeStore.inMemory();
        store.attach(volume);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        connection = transport.connect(listener.address(), new ConnectOptions(1, 8));
        device = BlockDevice.open(connection, name);
    }

    /** Writes a random block at each LBA of {@code [from, to)}, one by one, each put in {@code acked} once acknowledged. */
    public void writeRandom(long from, long to, java.util.Random r, java.util.Map<Long, byte[]> acked) throws IOException {
        for (long lba = from; lba < to; lba++) {
            byte[] d = new byte[volume.format().dataSize()];
            r.nextBytes(d);
            device.writeSync(lba, java.nio.ByteBuffer.wrap(d));
            acked.put(lba, d);
        }
    }

    /**
     * One block at {@code lba} read straight from the volume as a request received at
     * {@code receivedNanos} ({@link io.pistore.spi.BlockRequest#receivedNanos}; 0: unknown).
     */
    public byte[] readReceived(long lba, long receivedNanos) throws IOException {
        io.pistore.integrity.BlockFormat f = volume.format();
        byte[] d = new byte[f.dataSize()];
        volume.read(lba, 1, io.pistore.integrity.ScatterList.wrap(d),
                io.pistore.integrity.ScatterList.wrap(new byte[f.metadataSize()]), receivedNanos);
        return d;
    }

    @Override
    public void close() throws IOException {
        connection.close();
        listener.close();
        transport.close();
        store.close();
    }
}
