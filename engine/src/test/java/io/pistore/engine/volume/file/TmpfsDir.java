package io.pistore.engine.volume.file;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * A new directory on the tmpfs at {@code /dev/shm}, for tests of what file volumes do where their
 * files are in memory; the test is skipped where there is none. Closing deletes it and its files.
 */
final class TmpfsDir implements AutoCloseable {
    final Path path;

    private TmpfsDir(Path path) {
        this.path = path;
    }

    static TmpfsDir create(String prefix) throws IOException {
        Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isDirectory(shm) && "tmpfs".equals(Files.getFileStore(shm).type()),
                "no tmpfs at /dev/shm");
        return new TmpfsDir(Files.createTempDirectory(shm, prefix));
    }

    @Override
    public void close() throws IOException {
        try (var files = Files.list(path)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.delete(f);
            }
        }
        Files.delete(path);
    }
}
