package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A read racing a write of the same blocks sees old or new blocks, each whole: never a torn one. */
class BlockAtomicityTest {
    @TempDir
    Path dir;

    private static final BlockFormat F = BlockFormat.of(4096, 8);

    @ParameterizedTest
    @ValueSource(strings = {"memory", "file", "cached-file"})
    void racingReadsSeeWholeBlocks(String kind) throws Exception {
        VolumeStore store = kind.equals("memory") ? VolumeStore.inMemory()
                : VolumeStore.open(dir, kind.equals("cached-file") ? 1 << 20 : 0);
        try (store) {
            Volume v = store.create("a", F, 8);
            int n = 4;
            byte[][] data = new byte[2][n * 4096];
            byte[][] meta = new byte[2][n * 8];
            for (int k = 0; k < 2; k++) {
                Arrays.fill(data[k], (byte) (0x11 * (k + 1)));
                Pi.generate(PiContext.builder(F).initialRefTag(2).build(), ScatterList.wrap(data[k]),
                        ScatterList.wrap(meta[k]), n);
            }
            v.write(2, n, ScatterList.wrap(data[0]), ScatterList.wrap(meta[0]), false);
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService ex = Executors.newFixedThreadPool(3);
            try {
                List<Future<String>> fs = new ArrayList<>();
                fs.add(ex.submit(() -> {
                    for (int i = 0; i < 4000 && !stop.get(); i++) {
                        v.write(2, n, ScatterList.wrap(data[i & 1]), ScatterList.wrap(meta[i & 1]), false);
                    }
                    stop.set(true);
                    return null;
                }));
                for (int t = 0; t < 2; t++) {
                    fs.add(ex.submit(() -> {
                        PiContext ctx = PiContext.builder(F).initialRefTag(2).build();
                        byte[] d = new byte[n * 4096];
                        byte[] m = new byte[n * 8];
                        while (!stop.get()) {
                            v.read(2, n, ScatterList.wrap(d), ScatterList.wrap(m));
                            PiError e = Pi.verify(ctx, ScatterList.wrap(d), ScatterList.wrap(m), n);
                            if (e != null) {
                                stop.set(true);
                                return "torn read: " + e;
                            }
                        }
                        return null;
                    }));
                }
                for (Future<String> f : fs) {
                    assertEquals(null, f.get(60, TimeUnit.SECONDS));
                }
            } finally {
                ex.shutdownNow();
            }
        }
    }
}
