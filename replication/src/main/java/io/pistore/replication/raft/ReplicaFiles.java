package io.pistore.replication.raft;

import io.pistore.engine.volume.PrivateFiles;
import io.pistore.engine.volume.VolumeStore;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A replica's engine volume as files that a snapshot copies and an installed snapshot replaces,
 * with the replica's record ({@code DIR/groups/NAME.applied}) of an index up to which its files hold
 * every entry durably: moved at each snapshot it takes, after each restore, and at a clean stop. The
 * record is what makes a restore all-or-nothing: it passes a snapshot's index only once the files
 * hold that snapshot whole, so a replica whose record is older than the newest snapshot Ratis resumes
 * from is restored from it before it is used, however far a crash let an earlier restore go.
 */
public final class ReplicaFiles {
    private final VolumeStore store;
    private final String name;
    private final Path record;

    public ReplicaFiles(VolumeStore store, String name, Path record) {
        this.store = store;
        this.name = name;
        this.record = record;
    }

    String name() {
        return name;
    }

    /** The record's file of replica {@code name} in a peer's {@code groups} directory. */
    public static Path record(Path groupsDir, String name) {
        return groupsDir.resolve(name + ".applied");
    }

    /** Bytes of the volume's home files: what a snapshot copies and ships. */
    long volumeBytes() {
        var v = store.get(name);
        return v.blockCount() * (v.format().dataSize() + v.format().metadataSize());
    }

    /** Moves every block of the volume into its home files and forces them (its journal emptied). */
    void checkpoint() throws IOException {
        store.checkpoint(name);
    }

    /** Whether the volume has a metadata file. */
    boolean hasMetadata() {
        return store.get(name).format().metadataSize() > 0;
    }

    /**
     * Copies one of the volume's home files as it is, while entries go on being applied: a fuzzy
     * image ({@link VolumeStore#copyHomeFile}), whole once the entries applied meanwhile are again.
     */
    void copyHomeFile(boolean metadata, Path copy) throws IOException {
        store.copyHomeFile(name, metadata, copy);
    }

    /**
     * Replaces the volume's blocks with a snapshot's copy; see {@link VolumeStore#restore}. A copy of
     * more blocks (taken after the volume grew, which this replica has not applied yet) grows the
     * replica first; a replica never holds more blocks than a snapshot newer than what it applied.
     */
    void restoreFrom(Path data, Path meta) throws IOException {
        var v = store.get(name);
        long copied = Files.size(data) / v.format().dataSize();
        if (copied > v.blockCount()) {
            store.resize(name, copied);
        }
        store.restore(name, data, meta);
    }

    /** The index up to which the replica's files hold every entry durably, as recorded; -1 if none. */
    long heldIndex() throws IOException {
        if (!Files.exists(record)) {
            return -1;
        }
        String s = Files.readString(record, StandardCharsets.UTF_8).strip();
        if (!s.startsWith("index ")) {
            throw new IOException("replica " + name + ": " + record + " is not a record of an applied index: '" + s + "'");
        }
        try {
            return Long.parseLong(s.substring("index ".length()).strip());
        } catch (NumberFormatException e) {
            throw new IOException("replica " + name + ": " + record + " is not a record of an applied index: '" + s + "'");
        }
    }

    /** Records, durably and atomically, that the replica's files hold every entry up to {@code index}. */
    void recordHeld(long index) throws IOException {
        PrivateFiles.createDirectories(record.getParent());
        Path tmp = record.resolveSibling(record.getFileName() + ".tmp");
        PrivateFiles.writeForced(tmp, ("index " + index + "\n").getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, record, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory(record.getParent());
    }

    /** fsync of a directory, so a name created, renamed or removed in it is durable. */
    public static void forceDirectory(Path dir) throws IOException {
        try (FileChannel c = FileChannel.open(dir, StandardOpenOption.READ)) {
            c.force(true);
        }
    }
}
