package io.pistore.engine.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockDevice#unwrittenBlocks} with the caller's scratch for the blocks' data (a pooled direct
 * buffer in the frontends) answers as with its own array, whatever the scratch's position, and
 * leaves the scratch's bytes outside the read alone.
 */
class UnwrittenBlocksScratchTest {
    private static final int BLOCKS = 256;
    private VolumeStore store;
    private BlockTransport transport;
    private TargetListener listener;
    private HostConnection connection;
    private BlockDevice device;

    @BeforeEach
    void start() throws Exception {
        store = VolumeStore.inMemory();
        store.create("v", BlockFormat.of(512, 8), BLOCKS);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        connection = transport.connect(listener.address(), new ConnectOptions(1, 8));
        device = BlockDevice.open(connection, "v");
    }

    @AfterEach
    void stop() throws Exception {
        connection.close();
        listener.close();
        transport.close();
        store.close();
    }

    @Test
    void aScratchGivesTheSameAnswerAsANewArray() throws Exception {
        Random r = new Random(41);
        BitSet written = new BitSet(BLOCKS);
        for (int i = 0; i < 40; i++) {
            int lba = r.nextInt(BLOCKS - 8);
            int n = 1 + r.nextInt(8);
            byte[] d = new byte[n * 512];
            r.nextBytes(d);
            device.writeSync(lba, ByteBuffer.wrap(d));
            written.set(lba, lba + n);
        }
        for (int round = 0; round < 20; round++) {
            int lba = r.nextInt(BLOCKS);
            int n = 1 + r.nextInt(BLOCKS - lba);
            BitSet own = device.unwrittenBlocks(lba, n).get();
            int before = r.nextInt(64);
            ByteBuffer scratch = (round % 2 == 0 ? ByteBuffer.allocateDirect(before + n * 512 + 64)
                    : ByteBuffer.allocate(before + n * 512 + 64));
            for (int k = 0; k < scratch.capacity(); k++) {
                scratch.put(k, (byte) 0x77);
            }
            scratch.position(before);
            BitSet withScratch = device.unwrittenBlocks(lba, n, device::submit, scratch).get();
            assertEquals(own, withScratch, "lba " + lba + " + " + n);
            for (int i = 0; i < n; i++) {
                assertEquals(!written.get(lba + i), own.get(i), "block " + (lba + i));
            }
            for (int k = 0; k < before; k++) {
                assertEquals(0x77, scratch.get(k), "byte " + k + " before the scratch's position");
            }
            for (int k = before + n * 512; k < scratch.capacity(); k++) {
                assertEquals(0x77, scratch.get(k), "byte " + k + " after the read");
            }
            assertEquals(before, scratch.position(), "the scratch's position stays");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> device.unwrittenBlocks(0, 4, device::submit, ByteBuffer.allocate(2047)));
        assertTrue(e.getMessage().contains("4 blocks need 2048"), e.getMessage());
    }
}
