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
 * {@link BlockDevice#unwrittenBlocks} built on it answers as the whole read did, with or without the
 * caller's scratch, and still refuses a block whose metadata is the unwritten pattern over data that
 * is not zeros.
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

    /** A local transport to a target service over {@code store}, and a device for its volume {@code v}. */
    private record Local(BlockTransport transport, TargetListener listener, HostConnection connection, BlockDevice device)
            implements AutoCloseable {
        static Local over(VolumeStore store) throws Exception {
            BlockTransport t = new LocalTransportProvider().create();
            TargetListener l = t.listen("", new TargetService(store));
            HostConnection c = t.connect(l.address(), new ConnectOptions(1, 8));
            return new Local(t, l, c, BlockDevice.open(c, "v"));
        }

        @Override
        public void close() {
            connection.close();
            listener.close();
            transport.close();
        }
    }

    /** Forty random writes of 1 to 8 blocks through {@code device}: the blocks they wrote. */
    private static BitSet writeRandomly(BlockDevice device, Random r) throws Exception {
        BitSet written = new BitSet(BLOCKS);
        for (int i = 0; i < 40; i++) {
            int lba = r.nextInt(BLOCKS - 8);
            int n = 1 + r.nextInt(8);
            byte[] d = new byte[n * 512];
            r.nextBytes(d);
            device.writeSync(lba, ByteBuffer.wrap(d));
            written.set(lba, lba + n);
        }
        return written;
    }

    @Test
    void statusFromMetadataMatchesTheWholeReadAndRefusesAForgedHole() throws Exception {
        try (VolumeStore store = VolumeStore.open(dir)) {
            Volume v = store.create("v", F, BLOCKS);
            try (Local local = Local.over(store)) {
                assertTrue(local.connection().readsMetadataOnly(), "the local transport to a target service");
                BlockDevice device = local.device();
                Random r = new Random(8);
                BitSet written = writeRandomly(device, r);
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
            }
        }
    }

    /**
     * With the caller's scratch for the data of the blocks read whole (a pooled direct buffer in the
     * frontends), the answer is the same, whatever the scratch's position, and the scratch's bytes
     * outside the read are left alone.
     */
    @Test
    void aScratchGivesTheSameAnswerAsANewArray() throws Exception {
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("v", F, BLOCKS);
            try (Local local = Local.over(store)) {
                BlockDevice device = local.device();
                Random r = new Random(41);
                writeRandomly(device, r);
                for (int round = 0; round < 20; round++) {
                    int lba = r.nextInt(BLOCKS);
                    int n = 1 + r.nextInt(BLOCKS - lba);
                    BitSet own = device.unwrittenBlocks(lba, n).get();
                    int before = r.nextInt(64);
                    ByteBuffer scratch = round % 2 == 0 ? ByteBuffer.allocateDirect(before + n * 512 + 64)
                            : ByteBuffer.allocate(before + n * 512 + 64);
                    for (int k = 0; k < scratch.capacity(); k++) {
                        scratch.put(k, (byte) 0x77);
                    }
                    scratch.position(before);
                    assertEquals(own, device.unwrittenBlocks(lba, n, device::submit, scratch).get(), "lba " + lba + " + " + n);
                    for (int k = 0; k < scratch.capacity(); k++) {
                        if (k < before || k >= before + n * 512) {
                            assertEquals(0x77, scratch.get(k), "byte " + k + " outside the read");
                        }
                    }
                    assertEquals(before, scratch.position(), "the scratch's position stays");
                }
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> device.unwrittenBlocks(0, 4, device::submit, ByteBuffer.allocate(2047)));
                assertTrue(e.getMessage().contains("4 blocks need 2048"), e.getMessage());
            }
        }
    }
}
