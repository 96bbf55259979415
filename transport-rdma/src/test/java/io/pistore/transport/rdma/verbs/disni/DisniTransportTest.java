package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.RdmaTransport;
import io.pistore.transport.rdma.internal.RdmaHostConnection;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.VerbsProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The rdma transport itself (host queues, target connections, capsules, staging buffers, software
 * PI) over the DiSNI binding, with the fake seam moving the bytes of each executed SEND, RDMA READ
 * and RDMA WRITE between registered buffers: what a DiSNI device would run, minus libdisni and the
 * NIC. The device has no integrity MR, so every request takes the software-PI path.
 */
class DisniTransportTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);
    static final int BLOCKS = 64;

    /** A target that keeps data and metadata in arrays and checks nothing (the engine's job, not the transport's). */
    static final class ArrayTarget implements TargetHandler {
        final byte[] data = new byte[BLOCKS * F.dataSize()];
        final byte[] meta = new byte[BLOCKS * F.metadataSize()];

        @Override
        public List<VolumeInfo> volumes() {
            return List.of(new VolumeInfo("v", BLOCKS, F));
        }

        @Override
        public synchronized void execute(BlockRequest r, io.pistore.spi.PiDuty duty, Consumer<Completion> done) {
            int d = (int) r.lba() * F.dataSize();
            int m = (int) r.lba() * F.metadataSize();
            switch (r.op()) {
                case WRITE -> {
                    copy(r.data(), data, d);
                    copy(r.metadata(), meta, m);
                }
                case READ -> {
                    put(data, d, r.data());
                    put(meta, m, r.metadata());
                }
                default -> { }
            }
            done.accept(Completion.success());
        }

        private static void copy(ScatterList from, byte[] to, int at) {
            for (int i = 0; i < from.segmentCount(); i++) {
                ByteBuffer s = from.segment(i);
                int n = s.remaining();
                s.get(to, at, n);
                at += n;
            }
        }

        private static void put(byte[] from, int at, ScatterList to) {
            for (int i = 0; i < to.segmentCount(); i++) {
                ByteBuffer s = to.segment(i);
                int n = s.remaining();
                s.put(from, at, n);
                at += n;
            }
        }
    }

    @Test
    void writesAndReadsGoThroughTheBindingWithSoftwarePi() throws Exception {
        FakeDisni fake = new FakeDisni("127.0.0.1");
        fake.moveData = true;
        VerbsProvider provider = new VerbsProvider() {
            @Override
            public String name() {
                return DisniVerbsProvider.NAME;
            }

            @Override
            public Availability probe() {
                return Availability.available();
            }

            @Override
            public DeviceCaps caps(TransportOptions options) {
                return DisniVerbsProvider.caps(16384);
            }

            @Override
            public VerbsDevice open(TransportOptions options) throws VerbsException {
                return new DisniDevice(fake, "127.0.0.1", List.of(), DisniVerbsProvider.caps(16384));
            }
        };
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort() - DisniAddress.CONTROL_PORT_OFFSET;
        }
        ArrayTarget target = new ArrayTarget();
        try (RdmaTransport t = new RdmaTransport(provider, new RdmaOptions("disni", RdmaOptions.PiMode.AUTO));
             TargetListener l = t.listen("127.0.0.1:" + port, target);
             HostConnection c = t.connect(l.address(), new ConnectOptions(2, 8))) {
            assertEquals(List.of(new VolumeInfo("v", BLOCKS, F)), c.volumes(), "discovery (an RDMA WRITE) came back");
            Random r = new Random(6);
            int lba = 5;
            int n = 3;
            byte[] data = new byte[n * F.dataSize()];
            r.nextBytes(data);
            byte[] meta = new byte[n * F.metadataSize()];
            PiContext ctx = PiContext.builder(F).initialRefTag(lba).appTag(0x77).build();
            Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), n);
            Protection pass = Protection.pass(CheckFlags.ALL, lba, 0x77, 0xFFFF);
            Completion w = c.queue(1).submit(BlockRequest.write("v", lba, n, ScatterList.wrap(data),
                    ScatterList.wrap(meta), pass, false)).get(30, TimeUnit.SECONDS);
            assertTrue(w.isSuccess(), w.toString());
            assertArrayEquals(data, java.util.Arrays.copyOfRange(target.data, lba * 4096, (lba + n) * 4096),
                    "the target RDMA-READ the host's staging buffer");
            byte[] back = new byte[data.length];
            byte[] backMeta = new byte[meta.length];
            Completion rd = c.queue(0).submit(BlockRequest.read("v", lba, n, ScatterList.wrap(back),
                    ScatterList.wrap(backMeta), pass)).get(30, TimeUnit.SECONDS);
            assertTrue(rd.isSuccess(), rd.toString());
            assertArrayEquals(data, back, "the target RDMA-WROTE the data back");
            assertArrayEquals(meta, backMeta);
            // a flipped bit at rest: the host's software check reports it with its LBA
            target.data[(lba + 1) * 4096 + 100] ^= 4;
            Completion bad = c.queue(0).submit(BlockRequest.read("v", lba, n, ScatterList.wrap(back),
                    ScatterList.wrap(backMeta), pass)).get(30, TimeUnit.SECONDS);
            assertEquals(Status.GUARD_CHECK, bad.status(), bad.toString());
            assertEquals(lba + 1, bad.errorLba());
            RdmaHostConnection h = (RdmaHostConnection) c;
            assertEquals(0, h.offloadedRequests(), "DiSNI has no integrity MR");
            assertEquals(3, h.softwareRequests());
            assertTrue(h.pathOf("v").startsWith("software: "), h.pathOf("v"));
            assertTrue(fake.bytesMoved.get() >= 2 * data.length, "bytes moved: " + fake.bytesMoved.get());
        }
    }
}
