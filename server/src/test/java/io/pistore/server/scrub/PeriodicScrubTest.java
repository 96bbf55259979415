package io.pistore.server.scrub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.server.metrics.EngineCollector;
import io.pistore.testkit.Eventually;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background scrub over a real data directory: a block whose home data changed at rest is
 * logged with its LBA and counted in the figures and the metrics, pass after pass; a volume deleted
 * during its pass ends that pass with a line and the scrub goes on; closing ends the thread; and the
 * pacing that keeps a pass to its rate.
 */
class PeriodicScrubTest {
    @TempDir
    Path dir;

    final List<String> log = new CopyOnWriteArrayList<>();

    /** v: 64 blocks of 4096+8, all written, block 9's home data changed at rest; w: 512+8, unwritten. */
    void createVolumes() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v", BlockFormat.of(4096, 8), 64);
            s.create("w", BlockFormat.of(512, 8), 256);
            byte[] data = new byte[64 * 4096];
            new Random(9).nextBytes(data);
            byte[] meta = new byte[64 * 8];
            BlockFormat f = s.get("v").format();
            io.pistore.integrity.Pi.generate(io.pistore.integrity.PiContext.builder(f).initialRefTag(0).build(),
                    ScatterList.wrap(data), ScatterList.wrap(meta), 64);
            s.get("v").write(0, 64, ScatterList.wrap(data), ScatterList.wrap(meta), true);
        } // closed: the journal went home
        try (FileChannel c = FileChannel.open(dir.resolve("v.data"), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            c.read(b, 9L * 4096 + 100);
            b.put(0, (byte) (b.get(0) ^ 0x10)).rewind();
            c.write(b, 9L * 4096 + 100);
        }
    }

    @Test
    void aBlockBadAtRestIsLoggedAndCountedPassAfterPass() throws Exception {
        createVolumes();
        try (VolumeStore s = VolumeStore.open(dir);
             PeriodicScrub scrub = PeriodicScrub.start(s, Duration.ofMillis(20), 1L << 30, log::add)) {
            EngineCollector metrics = new EngineCollector(new TargetStats(8));
            metrics.add(scrub);
            metrics.add(s);
            Eventually.await("two passes over v", () -> scrub.figures().containsKey("v") && scrub.figures().get("v").passes() >= 2);
            PeriodicScrub.Figures v = scrub.figures().get("v");
            assertEquals(64, v.checkedBlocks());
            assertEquals(1, v.badBlocks(), log.toString());
            assertTrue(log.stream().anyMatch(l -> l.startsWith("scrub: v: lba=9 error=guard ")), log.toString());
            assertTrue(log.stream().anyMatch(l -> l.startsWith("scrub: v: checked 64 blocks (") && l.endsWith(": 1 bad, 0 unwritten")),
                    log.toString());
            Eventually.await("a pass over w", () -> scrub.figures().containsKey("w"));
            assertEquals(0, scrub.figures().get("w").badBlocks());
            assertEquals(1.0, gauge(metrics, "pistore_scrub_bad_blocks", "v"));
            assertEquals(0.0, gauge(metrics, "pistore_scrub_bad_blocks", "w"));
            assertEquals(64.0, gauge(metrics, "pistore_scrub_checked_blocks", "v"));
        }
    }

    @Test
    void aVolumeDeletedDuringItsPassEndsThatPassAndCloseEndsTheThread() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("big", BlockFormat.of(4096, 8), 16384); // 64 MiB: 64 s at 1 MiB/s
            s.create("small", BlockFormat.of(4096, 8), 16);
            PeriodicScrub scrub = PeriodicScrub.start(s, Duration.ofMillis(10), 1L << 20, log::add);
            try {
                // the pass over big waits between its chunks; deleting big ends its pass
                Eventually.await("the scrub into big", () -> "big".equals(scrub.current()));
                s.delete("big");
                Eventually.await("big's pass ends with a line", () -> log.stream().anyMatch(l -> l.startsWith("scrub: big: stopped: ")));
                Eventually.await("small scrubbed after it", () -> scrub.figures().containsKey("small"));
            } finally {
                scrub.close();
            }
            assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("pistore-scrub")),
                    "the scrub's thread ended");
        }
    }

    @Test
    void pacingKeepsAPassToItsRate() {
        assertEquals(1_000_000_000L, PeriodicScrub.pauseNanos(1 << 20, 1 << 20, 0), "1 MiB at 1 MiB/s: a second");
        assertEquals(400_000_000L, PeriodicScrub.pauseNanos(1 << 20, 1 << 20, 600_000_000L));
        assertEquals(0, PeriodicScrub.pauseNanos(1 << 20, 1 << 20, 2_000_000_000L), "behind: no pause");
        assertEquals(0, PeriodicScrub.pauseNanos(0, 1, 0));
    }

    static double gauge(EngineCollector c, String name, String volume) {
        for (MetricSnapshot m : c.collect()) {
            if (m.getMetadata().getName().equals(name) && m instanceof GaugeSnapshot g) {
                for (GaugeSnapshot.GaugeDataPointSnapshot p : g.getDataPoints()) {
                    if (volume.equals(p.getLabels().get("volume"))) {
                        return p.getValue();
                    }
                }
            }
        }
        throw new AssertionError("no " + name + " for " + volume);
    }
}
