package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.ForwardingVolume;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A read reaches the volume with the time its request had arrived whole at the server (after the
 * client sent it, before the server answered), and reads that arrived in one socket read carry the
 * same time: a replicated volume then shares one read index among them. Writes carry none.
 */
class NbdReadReceiveTimeTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);

    /** A volume that remembers the receive time of each read. */
    static final class Recording extends ForwardingVolume {
        final List<long[]> reads = new CopyOnWriteArrayList<>(); // {lba, receivedNanos}, from the target's threads
        final List<Long> plainReads = new CopyOnWriteArrayList<>();

        Recording() {
            super(new MemoryVolume("r", F, 256));
        }

        @Override public void read(long lba, int n, ScatterList d, ScatterList m) throws IOException {
            plainReads.add(lba);
            super.read(lba, n, d, m);
        }

        @Override public void read(long lba, int n, ScatterList d, ScatterList m, long receivedNanos) throws IOException {
            reads.add(new long[] {lba, receivedNanos});
            super.read(lba, n, d, m);
        }
    }

    private final Recording volume = new Recording();
    private VolumeStore store;
    private BlockTransport transport;
    private TargetListener listener;
    private HostConnection host;
    private NbdServer server;

    @BeforeEach
    void start() throws IOException {
        store = VolumeStore.inMemory();
        store.attach(volume);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = transport.connect(listener.address(), new ConnectOptions(1, 64));
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().handshakeTimeoutMillis(2000));
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    private NbdTestClient connect() throws IOException {
        NbdTestClient c = NbdTestClient.open(server.address());
        List<NbdTestClient.OptionReply> r = c.go("r");
        assertEquals(NbdServerTest.REP_ACK, r.get(r.size() - 1).type(), "GO r");
        return c;
    }

    @Test
    void aReadCarriesATimeBetweenItsSendingAndItsAnswer() throws IOException {
        try (NbdTestClient c = connect()) {
            byte[] d = NbdServerTest.random(4096, 7);
            c.request(0, NbdServerTest.WRITE, 3 * 4096L, 4096, d);
            assertEquals(0, c.reply().error());
            for (int i = 0; i < 5; i++) {
                long before = System.nanoTime();
                c.request(0, NbdServerTest.READ, 3 * 4096L, 4096, null);
                NbdTestClient.Reply r = c.reply(4096);
                long after = System.nanoTime();
                assertEquals(0, r.error());
                assertArrayEquals(d, r.payload());
                long at = volume.reads.get(volume.reads.size() - 1)[1];
                assertTrue(at - before > 0 && after - at > 0, "received " + (at - before) + " ns after the send, "
                        + (after - at) + " ns before the answer");
            }
            assertTrue(volume.plainReads.isEmpty(), "every read carried a time: " + volume.plainReads);
        }
    }

    @Test
    void readsThatArriveTogetherCarryOneTime() throws IOException {
        try (NbdTestClient c = connect()) {
            int n = 8;
            ByteBuffer b = ByteBuffer.allocate(n * NbdProtocol.REQUEST_HEADER);
            for (int i = 0; i < n; i++) {
                b.putInt(NbdProtocol.REQUEST_MAGIC).putShort((short) 0).putShort((short) NbdServerTest.READ)
                        .putLong(100 + i).putLong(i * 4096L).putInt(4096);
            }
            long before = System.nanoTime();
            c.raw(b.array()); // one send: the server takes the eight headers in one socket read
            for (int i = 0; i < n; i++) {
                assertEquals(0, c.reply(4096).error());
            }
            assertEquals(n, volume.reads.size());
            long at = volume.reads.get(0)[1];
            assertTrue(at - before > 0, "received after the send");
            for (long[] r : volume.reads) {
                assertEquals(at, r[1], "read of lba " + r[0] + " received with the others");
            }
        }
    }
}
