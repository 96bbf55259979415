package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reads of metadata alone over tcp ({@link BlockRequest#readMetadata}): with a target that serves
 * them, one READ whose response carries the stored metadata and no data; with one that does not, the
 * host reads the blocks whole and hands back their metadata, so a caller gets the same answer either
 * way. Bad uses of the flag are in {@link TargetBadInputTest}, the decoder's length check in
 * {@link ResponseDecoderTest}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpMetadataReadTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private static final int BLOCKS = 256;

    private TcpTransport transport;
    private MemoryHandler handler;
    private TargetListener listener;

    @AfterEach
    void stop() {
        if (transport != null) {
            transport.close();
        }
    }

    private HostConnection start(BlockFormat f, boolean serves) throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        transport = new TcpTransport(cfg);
        handler = new MemoryHandler(f, BLOCKS);
        handler.servesMetadataOnly = serves;
        listener = transport.listen("127.0.0.1:0", handler);
        return transport.connect(listener.address(), new ConnectOptions(1, 8));
    }

    /** Random PRACT writes (the host generates each block's PI), some blocks left unwritten. */
    private static void writeSome(HostConnection c, Random r) throws Exception {
        for (int i = 0; i < 30; i++) {
            int lba = r.nextInt(BLOCKS - 8);
            int n = 1 + r.nextInt(8);
            byte[] d = new byte[n * 4096];
            r.nextBytes(d);
            Completion w = c.queue(0).submit(BlockRequest.write(MemoryHandler.VOLUME, lba, n, ScatterList.wrap(d), null,
                    Protection.insertStrip(lba), false)).get(10, TimeUnit.SECONDS);
            assertEquals(Status.SUCCESS, w.status(), w.toString());
        }
    }

    /**
     * Reads the metadata of a random run of blocks through {@code c}, which must succeed and give what
     * the target stores; returns the request the target got for it, with its duty.
     */
    private BlockRequest readSomeMetadata(HostConnection c, Random r, PiDuty[] duty) throws Exception {
        int lba = r.nextInt(BLOCKS);
        int n = 1 + r.nextInt(Math.min(16, BLOCKS - lba));
        byte[] m = new byte[n * 8];
        Arrays.fill(m, (byte) 0x5a);
        int before = handler.requests.size();
        Completion done = c.queue(0).submit(BlockRequest.readMetadata(MemoryHandler.VOLUME, lba, n, ScatterList.wrap(m)))
                .get(10, TimeUnit.SECONDS);
        assertEquals(Status.SUCCESS, done.status(), done.toString());
        assertArrayEquals(Arrays.copyOfRange(handler.meta, lba * 8, (lba + n) * 8), m, "lba " + lba + " + " + n);
        duty[0] = handler.duties.get(before);
        return handler.requests.get(before);
    }

    @Test
    void aTargetThatServesThemAnswersWithTheStoredMetadataAlone() throws Exception {
        try (HostConnection c = start(F, true)) {
            assertTrue(c.readsMetadataOnly());
            Random r = new Random(3);
            writeSome(c, r);
            PiDuty[] duty = new PiDuty[1];
            for (int k = 0; k < 40; k++) {
                BlockRequest seen = readSomeMetadata(c, r, duty);
                assertTrue(seen.isMetadataOnly(), "the target got a metadata-only read, not " + seen);
                assertEquals(PiDuty.NONE, duty[0], "nothing to check");
            }
        }
        // On the wire: the response to a metadata-only READ is the metadata, 8 bytes per block.
        try (RawPeer p = RawPeer.connect(listener.address())) {
            RawPeer.Frame hello = p.greet(1 << 16, 4, 0, Protocol.FEATURE_METADATA_READS);
            assertEquals(Protocol.FEATURE_METADATA_READS, hello.header.get(Protocol.O_FEATURES));
            p.sendFrame(RawPeer.request(Protocol.OP_READ, Protocol.F_METADATA_ONLY, 7, 0, 1, 5, 40, 0, 0, 0), null);
            RawPeer.Frame f = p.readFrame(false);
            assertEquals(7, f.commandId());
            assertEquals(Protocol.statusCode(Status.SUCCESS), f.header.getShort(Protocol.O_STATUS));
            assertArrayEquals(Arrays.copyOfRange(handler.meta, 40 * 8, 45 * 8), f.payload);
        }
    }

    @Test
    void aTargetThatDoesNotServeThemIsReadWholeByTheHost() throws Exception {
        try (HostConnection c = start(F, false)) {
            assertTrue(c.readsMetadataOnly(), "the host serves them either way");
            Random r = new Random(4);
            writeSome(c, r);
            PiDuty[] duty = new PiDuty[1];
            for (int k = 0; k < 20; k++) {
                BlockRequest seen = readSomeMetadata(c, r, duty);
                assertFalse(seen.isMetadataOnly(), "read whole: " + seen);
                assertEquals(seen.blocks() * 4096L, seen.data().length());
            }
        }
        try (RawPeer p = RawPeer.connect(listener.address())) {
            RawPeer.Frame hello = p.greet(1 << 16, 4, 0, Protocol.FEATURE_METADATA_READS);
            assertEquals(0, hello.header.get(Protocol.O_FEATURES), "not granted by a target that does not serve them");
        }
    }

    /** A volume without metadata: the host refuses before sending; a target answers a raw peer INVALID_FIELD and goes on. */
    @Test
    void aVolumeWithoutMetadataHasNoneToRead() throws Exception {
        try (HostConnection c = start(BlockFormat.of(4096, 0), true)) {
            Completion refused = c.queue(0).submit(BlockRequest.readMetadata(MemoryHandler.VOLUME, 0, 1,
                    ScatterList.wrap(new byte[0]))).get(10, TimeUnit.SECONDS);
            assertEquals(Status.INVALID_FIELD, refused.status(), refused.toString());
            assertTrue(handler.requests.isEmpty(), "nothing was sent");
        }
        try (RawPeer p = RawPeer.connect(listener.address())) {
            p.greet(1 << 16, 4, 0, Protocol.FEATURE_METADATA_READS);
            p.sendFrame(RawPeer.request(Protocol.OP_READ, Protocol.F_METADATA_ONLY, 1, 0, 1, 1, 0, 0, 0, 0), null);
            RawPeer.Frame f = p.readFrame(false);
            assertEquals(Protocol.statusCode(Status.INVALID_FIELD), f.header.getShort(Protocol.O_STATUS));
            assertTrue(new String(f.payload).contains("which has no metadata"), new String(f.payload));
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 2, 0, 1, 1, 0, 0, 0, 0), null);
            f = p.readFrame(false);
            assertEquals(2, f.commandId());
            assertEquals(Protocol.statusCode(Status.SUCCESS), f.header.getShort(Protocol.O_STATUS), "the connection goes on");
        }
    }
}
