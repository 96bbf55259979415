package io.pistore.engine.volume;

import io.pistore.engine.volume.file.VolumeFiles;
import io.pistore.integrity.UnwrittenBlock;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Resize and delete of volumes that are in use: nothing written is lost, nothing half-done stays. */
class LiveVolumeChangesTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);

    @TempDir
    Path dir;

    private static byte[] block(long lba, int version) {
        byte[] b = new byte[F.dataSize()];
        new Random(lba * 31 + version).nextBytes(b);
        return b;
    }

    private static byte[] meta(long lba, int version) {
        byte[] m = new byte[F.metadataSize()];
        new Random(~(lba * 31 + version)).nextBytes(m);
        return m;
    }

    private static void write(Volume v, long lba, int version) throws IOException {
        v.write(lba, 1, ScatterList.wrap(block(lba, version)), ScatterList.wrap(meta(lba, version)), false);
    }

    private static void assertBlock(Volume v, long lba, int version) throws IOException {
        byte[] d = new byte[F.dataSize()];
        byte[] m = new byte[F.metadataSize()];
        v.read(lba, 1, ScatterList.wrap(d), ScatterList.wrap(m));
        assertArrayEquals(block(lba, version), d, "data of lba " + lba);
        assertArrayEquals(meta(lba, version), m, "metadata of lba " + lba);
    }

    private static void assertUnwritten(Volume v, long lba) throws IOException {
        byte[] d = new byte[F.dataSize()];
        byte[] m = new byte[F.metadataSize()];
        v.read(lba, 1, ScatterList.wrap(d), ScatterList.wrap(m));
        assertArrayEquals(new byte[F.dataSize()], d, "data of new lba " + lba);
        assertArrayEquals(UnwrittenBlock.metadata(F), m, "metadata of new lba " + lba);
    }

    @Test
    void growKeepsEveryBlockAddsUnwrittenOnesAndSurvivesARestart() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", F, 16);
            for (long lba = 0; lba < 16; lba++) {
                write(v, lba, 1);
            }
            s.resize("v", 40);
            assertEquals(40, v.blockCount(), "the handle already held sees the new size");
            assertEquals(40, s.get("v").blockCount());
            for (long lba = 0; lba < 16; lba++) {
                assertBlock(v, lba, 1);
            }
            for (long lba = 16; lba < 40; lba++) {
                assertUnwritten(v, lba);
            }
            write(v, 39, 2); // not flushed: the journal carries it across the restart
        }
        assertEquals(40L * F.dataSize(), Files.size(dir.resolve("v.data")));
        assertEquals(40L * F.metadataSize(), Files.size(dir.resolve("v.meta")));
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.get("v");
            assertEquals(40, v.blockCount());
            assertBlock(v, 0, 1);
            assertBlock(v, 15, 1);
            assertUnwritten(v, 16);
            assertBlock(v, 39, 2);
            assertTrue(s.openNotes().isEmpty(), s.openNotes().toString());
        }
    }

    @Test
    void shrinkingUnknownAndMemoryVolumesAreRefusedAndChangeNothing() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", F, 16);
            write(v, 15, 1);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.resize("v", 8));
            assertTrue(e.getMessage().contains("shrinking to 8 would drop data"), e.getMessage());
            assertEquals(16, v.blockCount());
            assertBlock(v, 15, 1);
            assertThrows(IllegalArgumentException.class, () -> s.resize("nosuch", 8));
        }
        try (VolumeStore m = VolumeStore.inMemory()) {
            m.create("v", F, 16);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.resize("v", 32));
            assertTrue(e.getMessage().contains("in memory"), e.getMessage());
        }
    }

    @Test
    void aResizeInterruptedByACrashIsRolledBackOnOpen() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", F, 16);
            write(v, 3, 1);
            v.flush();
        }
        // What a crash between the manifest's intent and its new size leaves: longer files, old size.
        Path manifest = dir.resolve("v.volume");
        Properties p = new Properties();
        try (var in = Files.newInputStream(manifest)) {
            p.load(in);
        }
        p.setProperty("resize.to", "64");
        try (var out = Files.newOutputStream(manifest)) {
            p.store(out, null);
        }
        VolumeFiles.grow(dir.resolve("v.data"), dir.resolve("v.meta"), F, 16, 40, true);
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertEquals(List.of("v: a resize to 64 blocks did not finish; rolled back to 16 blocks"), s.openNotes());
            Volume v = s.get("v");
            assertEquals(16, v.blockCount());
            assertBlock(v, 3, 1);
        }
        assertEquals(16L * F.dataSize(), Files.size(dir.resolve("v.data")));
        assertFalse(Files.readString(manifest).contains("resize.to"), "the rollback leaves a plain manifest");
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertTrue(s.openNotes().isEmpty(), "rolled back once: " + s.openNotes());
        }
    }

    /**
     * Writers and readers run against a volume while it grows three times: every request succeeds
     * (those that arrive during a resize wait), and every block reads back its last write.
     */
    /** Waits until the writers have made at least 20 more requests (or one failed). */
    private static void awaitMoreRequests(AtomicLong requests, ConcurrentLinkedQueue<Throwable> errors) {
        long from = requests.get();
        Eventually.await("20 more requests of the writers", () -> requests.get() >= from + 20 || !errors.isEmpty());
    }

    @Test
    void resizesUnderRunningIoLoseNothingAndFailNothing() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", F, 64);
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            int threads = 3;
            int[][] versions = new int[threads][64];
            AtomicLong requests = new AtomicLong();
            List<Thread> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread th = new Thread(() -> {
                    Random r = new Random(me);
                    try {
                        while (!stop.get()) {
                            // each thread owns the LBAs congruent to its number, so it knows their last write
                            long lba = me + threads * (long) r.nextInt(64 / threads);
                            int next = versions[me][(int) lba] + 1;
                            write(v, lba, next);
                            versions[me][(int) lba] = next;
                            assertBlock(v, lba, next);
                            requests.addAndGet(2);
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                th.start();
                running.add(th);
            }
            // Each resize lands while the writers are writing: some of their requests before it, more after.
            for (long size : new long[] {128, 256, 1024}) {
                awaitMoreRequests(requests, errors);
                s.resize("v", size);
            }
            awaitMoreRequests(requests, errors);
            stop.set(true);
            for (Thread th : running) {
                th.join();
            }
            assertTrue(errors.isEmpty(), "errors: " + errors);
            assertTrue(requests.get() > 0);
            assertEquals(1024, v.blockCount());
            for (int t = 0; t < threads; t++) {
                for (int lba = 0; lba < 64; lba++) {
                    if (versions[t][lba] > 0) {
                        assertBlock(v, lba, versions[t][lba]);
                    }
                }
            }
            assertEquals(0, s.activity("v").inFlight());
            assertTrue(s.activity("v").requestsEntered() >= requests.get());
        }
    }

    @Test
    void deleteUnderRunningIoFinishesWhatIsInsideAndSendsTheRestAway() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", F, 64);
            Volume other = s.create("w", F, 8);
            write(other, 1, 1);
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
            AtomicLong gone = new AtomicLong();
            AtomicLong written = new AtomicLong();
            Thread writer = new Thread(() -> {
                long lba = 0;
                while (!stop.get()) {
                    try {
                        write(v, lba++ % 64, 1);
                        written.incrementAndGet();
                    } catch (VolumeGoneException e) {
                        gone.incrementAndGet();
                        return;
                    } catch (Throwable e) {
                        unexpected.add(e);
                        return;
                    }
                }
            });
            writer.start();
            Eventually.await("the writer to write", () -> written.get() >= 20 || !unexpected.isEmpty());
            s.delete("v");
            writer.join(10_000);
            stop.set(true);
            assertTrue(unexpected.isEmpty(), "only 'volume was deleted' may reach a request: " + unexpected);
            assertEquals(1, gone.get(), "the writer learned that the volume is gone");
            VolumeGoneException e = assertThrows(VolumeGoneException.class, () -> write(v, 0, 1));
            assertEquals("volume v was deleted", e.getMessage());
            assertNull(s.get("v"));
            assertNull(s.activity("v"));
            for (String file : Arrays.asList("v.volume", "v.data", "v.meta", "v.journal")) {
                assertFalse(Files.exists(dir.resolve(file)), file);
            }
            assertBlock(other, 1, 1);
        }
    }
}
