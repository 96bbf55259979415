package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.SmallTmpfs;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume on tmpfs, where its data file is read out of a mapping: reading its unwritten blocks
 * takes no room (a hole touched through a mapping would be allocated), and on a full tmpfs reads
 * of every block and large writes fail or succeed with an answer, never with a fault (a store into
 * or a load from a hole that cannot be allocated is a SIGBUS); the volume heals once there is room.
 * A tmpfs the test mounts (root only; skipped elsewhere).
 */
class FullTmpfsTest {
    private BlockFormat format;
    private static final int BLOCKS = 8192; // 32 MiB of data; its journal's two segments take 64 MiB
    private static final int RUN = 32; // 128 KiB requests

    @TempDir
    Path dir;

    private static Completion served(TargetService t, BlockRequest r) throws Exception {
        CompletableFuture<Completion> c = new CompletableFuture<>();
        t.execute(r, PiDuty.of(r.protection()), c::complete);
        return c.get(30, TimeUnit.SECONDS);
    }

    private static long used(Path m) throws Exception {
        FileStore s = Files.getFileStore(m);
        return s.getTotalSpace() - s.getUnallocatedSpace();
    }

    /**
     * Blocks of a write that failed: like a disk's, each may hold its old or its new version afterwards
     * (a failed write's record may be in the journal already, and a heal writes it home).
     */
    private final Map<Integer, byte[]> failedWrites = new HashMap<>();

    /** Reads every block in runs; each read must succeed and match {@code acked} (zeros elsewhere). */
    private void readAll(TargetService t, Map<Integer, byte[]> acked, String when) throws Exception {
        byte[] zero = new byte[format.dataSize()];
        for (int lba = 0; lba < BLOCKS; lba += RUN) {
            byte[] back = new byte[RUN * format.dataSize()];
            Completion r = served(t, BlockRequest.read("v", lba, RUN, ScatterList.wrap(back), null,
                    Protection.insertStrip(lba)));
            assertTrue(r.isSuccess(), "read lba " + lba + " " + when + ": " + r);
            for (int b = 0; b < RUN; b++) {
                byte[] want = acked.getOrDefault(lba + b, zero);
                byte[] got = Arrays.copyOfRange(back, b * format.dataSize(), (b + 1) * format.dataSize());
                if (!Arrays.equals(want, got) && failedWrites.containsKey(lba + b)) {
                    want = failedWrites.get(lba + b);
                }
                assertArrayEquals(want, got, "block " + (lba + b) + " " + when);
            }
        }
    }

    private Completion write(TargetService t, int lba, Random r, Map<Integer, byte[]> acked) throws Exception {
        byte[] d = new byte[RUN * format.dataSize()];
        r.nextBytes(d);
        Completion c = served(t, BlockRequest.write("v", lba, RUN, ScatterList.wrap(d), null, Protection.insertStrip(lba),
                false));
        for (int b = 0; b < RUN; b++) {
            byte[] block = Arrays.copyOfRange(d, b * format.dataSize(), (b + 1) * format.dataSize());
            if (c.isSuccess()) {
                acked.put(lba + b, block);
                failedWrites.remove(lba + b);
            } else if (!failedWrites.containsKey(lba + b)) {
                failedWrites.put(lba + b, block); // only a volume's first failing write reaches its journal
            }
        }
        return c;
    }

    /** 4096+8, whose metadata tells a hole, and 4096+0, where the reads find out which pages hold data. */
    @ParameterizedTest
    @ValueSource(ints = {8, 0})
    void readsTakeNoRoomAndAFullTmpfsAnswersInsteadOfFaulting(int metadataSize) throws Exception {
        format = BlockFormat.of(4096, metadataSize);
        Path m = dir.resolve("full");
        assumeTrue(SmallTmpfs.mount(m, "size=76M"), "mounting a tmpfs (root only)");
        try (VolumeStore s = VolumeStore.open(m)) {
            s.create("v", format, BLOCKS);
            TargetService t = new TargetService(s);
            Map<Integer, byte[]> acked = new HashMap<>();
            long before = used(m);
            readAll(t, acked, "of a fresh volume");
            long grew = used(m) - before;
            assertTrue(grew < (1 << 20), "reading 32 MiB of unwritten blocks took " + grew + " bytes of the tmpfs");
            readAll(t, acked, "of a fresh volume, again");
            assertTrue(used(m) - before < (1 << 20), "reading them again took " + (used(m) - before) + " bytes");

            Random r = new Random(21);
            Completion c = null;
            int lba = 0;
            for (; lba < BLOCKS; lba += RUN) {
                c = write(t, lba, r, acked);
                if (!c.isSuccess()) {
                    break;
                }
            }
            assertTrue(lba > 0 && lba < BLOCKS, "the tmpfs filled after " + lba + " blocks");
            assertEquals(Status.NO_SPACE, c.status(), c.toString());
            readAll(t, acked, "on the full tmpfs");
            // past the pause, writes try a heal, which fails as the room is still not there: answered, not a fault
            long failedAt = System.nanoTime();
            int at = lba;
            Eventually.drive("a heal tried on the full tmpfs", Duration.ofSeconds(20), () -> {
                try {
                    Completion again = write(t, at, r, acked);
                    assertEquals(Status.NO_SPACE, again.status(), again.toString());
                    return 0;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }, () -> System.nanoTime() - failedAt > TimeUnit.MILLISECONDS.toNanos(1500));
            readAll(t, acked, "after a heal that failed");

            assertTrue(SmallTmpfs.remount(m, "size=200M"), "room made");
            Completion resumed = Eventually.until("writes to resume once there is room", () -> write(t, at, r, acked),
                    Completion::isSuccess);
            assertTrue(resumed.isSuccess());
            readAll(t, acked, "after the heal");
        } finally {
            SmallTmpfs.unmount(m);
        }
    }
}
