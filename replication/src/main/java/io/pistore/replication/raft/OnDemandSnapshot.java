package io.pistore.replication.raft;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;

/**
 * A snapshot whose copy of the volume is made only when it is shipped: its directory holds the
 * fence table, the shared state and a marker ({@link VolumeSnapshots#ON_DEMAND}); the replica's
 * home files held every entry up to its index when it was taken (a checkpoint), and the log after it
 * is kept. {@link #getFiles} is what a leader's appender reads to ship it, so the first call makes the
 * copy (and waits for it) and every call answers the copied files; the state machine reads the small
 * files through {@link #small} without copying anything.
 */
final class OnDemandSnapshot extends FileListSnapshotInfo {
    private final Path dir;
    private final Function<OnDemandSnapshot, FileListSnapshotInfo> copier;
    private volatile FileListSnapshotInfo copied;

    OnDemandSnapshot(Path dir, TermIndex at, List<FileInfo> small, Function<OnDemandSnapshot, FileListSnapshotInfo> copier) {
        super(small, at);
        this.dir = dir;
        this.copier = copier;
    }

    /** The snapshot's directory. */
    Path dir() {
        return dir;
    }

    /** The files kept without a copy: the fence table and the shared state, when there are. */
    List<FileInfo> small() {
        return super.getFiles();
    }

    /**
     * The files to ship, the volume's copy first: made at the first call (which waits for the copy,
     * as does a call made meanwhile). A copy that fails or is cancelled throws {@link
     * IllegalStateException}; the next call tries again.
     */
    @Override
    public List<FileInfo> getFiles() {
        FileListSnapshotInfo c = copied;
        if (c == null) {
            synchronized (this) {
                c = copied;
                if (c == null) {
                    c = copier.apply(this);
                    copied = c;
                }
            }
        }
        return c.getFiles();
    }
}
