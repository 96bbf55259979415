package io.pistore.replication.raft;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Lists a running peer's snapshot directories, whose older ones vanish when a newer copy is done. */
final class SnapshotListing {
    private SnapshotListing() {
    }

    /**
     * The paths under a peer's {@code raft} directory down to its snapshot directories ({@code
     * raft/GROUP/sm/snapshot.*}, not into them), listed again when one vanished during the listing.
     */
    static Stream<Path> walk(Path peerDir) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try (Stream<Path> s = Files.walk(peerDir.resolve("raft"), 3)) {
                List<Path> all = s.collect(Collectors.toList());
                return all.stream();
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof NoSuchFileException) || attempt == 20) {
                    throw e.getCause();
                }
            }
        }
    }
}
