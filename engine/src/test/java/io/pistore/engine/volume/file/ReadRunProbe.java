package io.pistore.engine.volume.file;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of 128 KiB reads of blocks still in the journal (written by 128 KiB writes, no checkpoint
 * yet), the reading thread's own: 8 MiB written to a fresh 64 MiB volume of {@code DS}+8 in
 * {@code DIR}, then read back 20 times, three rounds (the first pays the JIT). Not a test: a probe
 * for docs/FORMAT.md's figures, run against the engine on the class path.
 *
 * <pre>java -cp "engine/target/test-classes:engine/target/classes:integrity/target/classes:spi/target/classes:app/target/lib/*" \
 *     io.pistore.engine.volume.file.ReadRunProbe DIR DS</pre>
 */
public final class ReadRunProbe {
    private ReadRunProbe() {
    }

    public static void main(String[] a) throws Exception {
        int ds = Integer.parseInt(a[1]);
        BlockFormat f = BlockFormat.of(ds, 8);
        Path dir = Files.createTempDirectory(Path.of(a[0]), "rr");
        long blocks = (64L << 20) / ds;
        FileVolume.create(dir.resolve("v.data"), dir.resolve("v.meta"), dir.resolve("v.journal"), "v", f, blocks, null).close();
        FileVolume v = FileVolume.open(dir.resolve("v.data"), dir.resolve("v.meta"), dir.resolve("v.journal"), "v", f, blocks, 1 << 20, n -> { });
        int per = (128 << 10) / ds;
        byte[] d = new byte[per * ds];
        byte[] m = new byte[per * 8];
        int writes = (8 << 20) / (per * ds);
        for (int i = 0; i < writes; i++) {
            v.write((long) i * per, per, ScatterList.wrap(d), ScatterList.wrap(m), false);
        }
        var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int round = 0; round < 3; round++) {
            long c0 = bean.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            int reads = 0;
            for (int pass = 0; pass < 20; pass++) {
                for (int i = 0; i < writes; i++) {
                    v.read((long) i * per, per, ScatterList.wrap(d), ScatterList.wrap(m));
                    reads++;
                }
            }
            System.out.printf("ds=%d round %d: %.1f us cpu per 128 KiB read (%d reads, %.0f ms wall)%n", ds, round,
                    (bean.getCurrentThreadCpuTime() - c0) / 1000.0 / reads, reads, (System.nanoTime() - t0) / 1e6);
        }
        v.close();
        for (String n : new String[] {"v.data", "v.meta", "v.journal"}) {
            Files.deleteIfExists(dir.resolve(n));
        }
        Files.deleteIfExists(dir);
    }
}
