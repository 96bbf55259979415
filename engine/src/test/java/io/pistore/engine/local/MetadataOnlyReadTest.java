package io.pistore.engine.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.BlockIoException;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read of metadata alone ({@link Volume#readMetadata}, {@link BlockRequest#readMetadata}) gives what a
 * whole read gives, on file volumes (blocks still in the journal, written home, zeroed) and in memory;
 * {@link BlockDevice#unwrittenBlocks} built on it answers as the whole read did, and still refuses a
 * block whose metadata is the unwritten pattern over data that is not zeros.
 */
class MetadataOnlyReadTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int BLOCKS = 512;

    @TempDir
    Path dir;

    @Test
    void fileAndMemoryVolumesReadTheMetadataAWholeReadReads() throws Exception {
        try (VolumeStore files = VolumeStore.open(dir); VolumeStore memory = VolumeStore.inMemory()) {
            for (Volume v : new Volume[] {files.create("f", F, BLOCKS), memory.create("m", F, BLOCKS)}) {
                Random r = new Random(5);
                for (int round = 0; round < 6; round++) {
                    for (int i = 0; i < 30; i++) {
                        int lba = r.nextInt(BLOCKS - 16);
                        int n = 1 + r.nextInt(16);
                        if (r.nextInt(5) == 0) {
                            v.writeZeroes(lba, n, false);
                        } else {
                            byte[] d = new byte[n * 512];
                            byte[] m = new byte[n * 8];
                            r.nextBytes(d);
                            r.nextBytes(m);
                            v.write(lba, n, ScatterList.wrap(d), ScatterList.wrap(m), false);
                        }
                    }
                    if (round == 3) {
                        v.flush(); // some blocks home, some still only in the journal after
                    }
                    for (int k = 0; k < 20; k++) {
                        int lba = r.nextInt(BLOCKS);
                        int n = 1 + r.nextInt(Math.min(64, BLOCKS - lba));
                        byte[] whole = new byte[n * 8];
                        v.read(lba, n, ScatterList.wrap(new byte[n * 512]), ScatterList.wrap(whole));
                        byte[] alone = new byte[n * 8];
                        v.readMetadata(lba, n, ScatterList.wrap(alone));
                        assertArrayEquals(whole, alone, v.name() + " round " + round + " lba " + lba + " + " + n);
                    }
                }
            }
        }
    }

    @Test
    void statusFromMetadataMatchesTheWholeReadAndRefusesAForgedHole() throws Exception {
        try (VolumeStore store = VolumeStore.open(dir)) {
            Volume v = store.create("v", F, BLOCKS);
            BlockTransport transport = new LocalTransportProvider().create();
            TargetListener listener = transport.listen("", new TargetService(store));
            HostConnection connection = transport.connect(listener.address(), new ConnectOptions(1, 8));
            try {
                assertTrue(connection.readsMetadataOnly(), "the local transport to a target service");
                BlockDevice device = BlockDevice.open(connection, "v");
                Random r = new Random(8);
                BitSet written = new BitSet(BLOCKS);
                for (int i = 0; i < 40; i++) {
                    int lba = r.nextInt(BLOCKS - 8);
                    int n = 1 + r.nextInt(8);
                    byte[] d = new byte[n * 512];
                    r.nextBytes(d);
                    device.writeSync(lba, ByteBuffer.wrap(d));
                    written.set(lba, lba + n);
                }
                for (int k = 0; k < 30; k++) {
                    int lba = r.nextInt(BLOCKS);
                    int n = 1 + r.nextInt(BLOCKS - lba);
                    BitSet got = device.unwrittenBlocks(lba, n).get();
                    for (int i = 0; i < n; i++) {
                        assertEquals(!written.get(lba + i), got.get(i), "block " + (lba + i));
                    }
                }
                Completion c = device.submit(BlockRequest.readMetadata("v", 0, 4, ScatterList.wrap(new byte[31]))).get();
                assertEquals(Status.INVALID_FIELD, c.status(), "a metadata list of the wrong size: " + c);
                // a block whose metadata says unwritten over data that is not zeros: never reported as a hole
                byte[] nonZero = new byte[512];
                nonZero[9] = 1;
                v.write(300, 1, ScatterList.wrap(nonZero), ScatterList.wrap(UnwrittenBlock.metadata(F)), false);
                ExecutionException e = assertThrows(ExecutionException.class, () -> device.unwrittenBlocks(296, 8).get());
                assertTrue(e.getCause() instanceof BlockIoException, String.valueOf(e.getCause()));
                assertFalse(device.unwrittenBlocks(301, 8).get().isEmpty(), "the blocks after it");
            } finally {
                connection.close();
                listener.close();
                transport.close();
            }
        }
    }
}
