package io.pistore.replication.raft;

import io.pistore.spi.SharedVolumeState;
import io.pistore.spi.SharedVolumeState.Versioned;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The volume's shared state ({@link SharedVolumeState}) as one replica applied it: changed only by the
 * applier, in log order, by {@link ReplicaCommand.Op#SHARED_STATE} entries, so every replica holds the
 * same version and value after the same entry. A change is set when the version is still the one it
 * expected; the new version is the entry's log index, so versions only grow (several changes in one
 * batch entry: the first set wins, the others are not set). A second copy of a change that was set
 * (its entry sent again after the leader that took it stepped down) is answered set, not applied
 * again: the nonce of the last change set is kept with the value. Restored from a snapshot with the
 * blocks; a restart rebuilds it by applying the entries after the snapshot again. Each change set is
 * shown on the peer's {@link SharedStateBoard}.
 *
 * <p>Layout on disk (a snapshot's {@code shared} file): {@code version(8) nonce(8) length(4) value}.
 */
final class ReplicaSharedState {
    static final String FILE = "shared";
    private static final int HEADER = 20;

    private final SharedStateBoard board;
    private long version;
    private long nonce;
    private byte[] value = new byte[0];

    ReplicaSharedState(SharedStateBoard board) {
        this.board = board;
    }

    SharedStateBoard board() {
        return board;
    }

    /** The version this replica applied last (0: never set). */
    long version() {
        return version;
    }

    /** Why {@code c}, a shared-state change, is malformed, or null. */
    static String misfit(ReplicaCommand c) {
        long bytes = c.data == null ? 0 : c.data.remaining();
        if (c.lba < -1 || c.lba == -1 && bytes != 8 || bytes < 8 || bytes - 8 > SharedVolumeState.MAX_BYTES
                || c.metadata != null) {
            return c + ": a shared-state change expects a version of 0 or more and carries a nonce and at most "
                    + SharedVolumeState.MAX_BYTES + " bytes";
        }
        return null;
    }

    /** Applies change {@code c}, the command of log entry {@code index}: set, or not. */
    ApplyOutcome apply(ReplicaCommand c, long index) {
        if (c.lba == -1) { // a check: the version here, nothing set
            return ApplyOutcome.shared(false, version);
        }
        ByteBuffer d = c.data.duplicate();
        long n = d.getLong();
        if (version == c.lba && version < index) {
            byte[] v = new byte[d.remaining()];
            d.get(v);
            version = index;
            nonce = n;
            value = v;
            board.show(new Versioned(index, v.clone())); // what readers hold never changes the replica's
            return ApplyOutcome.shared(true, index);
        }
        // a second copy of the change set last: it was set (its first copy's answer may have been lost)
        return ApplyOutcome.shared(version != 0 && nonce == n && n != 0, version);
    }

    byte[] encode() {
        return ByteBuffer.allocate(HEADER + value.length).putLong(version).putLong(nonce).putInt(value.length).put(value)
                .array();
    }

    /** Replaces the state with the one in {@code file} (a snapshot's), or with none when null or absent. */
    void restore(Path file) throws IOException {
        long v = 0;
        long n = 0;
        byte[] bytes = new byte[0];
        if (file != null && Files.exists(file)) {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
            if (b.remaining() < HEADER) {
                throw new IOException(file + ": a shared state of " + b.remaining() + " bytes, shorter than its header");
            }
            v = b.getLong();
            n = b.getLong();
            int len = b.getInt();
            if (v < 0 || len < 0 || len != b.remaining() || (v == 0 && len != 0)) {
                throw new IOException(file + ": a shared state at version " + v + " says " + len + " bytes, holds "
                        + b.remaining());
            }
            bytes = new byte[len];
            b.get(bytes);
        }
        version = v;
        nonce = n;
        value = bytes;
        if (v != 0) {
            board.show(new Versioned(v, bytes.clone()));
        }
    }
}
