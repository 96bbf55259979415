package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import java.nio.file.Path;

/**
 * Another process that makes a data directory and volume {@code v1} in it ({@code DIR}), for the
 * test that a loose umask does not loosen their modes; started with the tests' class path.
 */
final class PrivateFilesProbe {
    private PrivateFilesProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (VolumeStore s = VolumeStore.open(Path.of(args[0]))) {
            s.create("v1", BlockFormat.of(512, 8), 64);
        }
        System.out.println("made");
    }
}
