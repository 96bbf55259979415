package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Not a test: what a replica's snapshot (copying a volume's home files) and a restore from one cost,
 * in wall time and the calling thread's CPU time, for a volume of {@code -Dpistore.image.probe.mib}
 * MiB of data (256) filled with random blocks, over {@code -Dpistore.image.probe.rounds} rounds (3).
 *
 * <pre>mvn -B -o -q verify -pl engine -am -Dtest=VolumeImageProbe -Dsurefire.failIfNoSpecifiedTests=false -Dpistore.image.probe=true</pre>
 */
@EnabledIfSystemProperty(named = "pistore.image.probe", matches = "true")
class VolumeImageProbe {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);

    @TempDir
    Path dir;

    @Test
    void probe() throws Exception {
        int mib = Integer.getInteger("pistore.image.probe.mib", 256);
        int rounds = Integer.getInteger("pistore.image.probe.rounds", 3);
        long blocks = (long) mib * 256;
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        try (VolumeStore s = VolumeStore.open(dir.resolve("store"))) {
            Volume v = s.create("v", FORMAT, blocks);
            Random r = new Random(5);
            byte[] d = new byte[256 * FORMAT.dataSize()];
            byte[] m = new byte[256 * FORMAT.metadataSize()];
            for (long lba = 0; lba < blocks; lba += 256) {
                r.nextBytes(d);
                r.nextBytes(m);
                v.write(lba, 256, ScatterList.wrap(d), ScatterList.wrap(m), false);
            }
            v.flush();
            Path img = Files.createDirectories(dir.resolve("img"));
            for (int i = 1; i <= rounds; i++) {
                long w0 = System.nanoTime();
                long c0 = cpu.getCurrentThreadCpuTime();
                s.copyHomeFiles("v", img.resolve("data"), img.resolve("meta"));
                long w1 = System.nanoTime();
                long c1 = cpu.getCurrentThreadCpuTime();
                s.restore("v", img.resolve("data"), img.resolve("meta"));
                long w2 = System.nanoTime();
                long c2 = cpu.getCurrentThreadCpuTime();
                System.out.printf("round %d, %d MiB: copy %.0f ms wall (%.0f MiB/s), %.0f ms cpu; restore %.0f ms wall"
                        + " (%.0f MiB/s), %.0f ms cpu%n", i, mib, (w1 - w0) / 1e6, mib / ((w1 - w0) / 1e9),
                        (c1 - c0) / 1e6, (w2 - w1) / 1e6, mib / ((w2 - w1) / 1e9), (c2 - c1) / 1e6);
                Files.delete(img.resolve("data"));
                Files.delete(img.resolve("meta"));
            }
        }
    }
}
