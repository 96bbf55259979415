package io.pistore.replication.raft;

import io.pistore.engine.volume.PrivateFiles;
import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.util.FileUtils;

/**
 * The snapshots of one replica, in its group's Ratis state machine directory ({@code .../sm}): each a
 * directory {@code snapshot.TERM_INDEX} holding a copy of the replica volume's home files, {@code
 * data} and (when the format has metadata) {@code meta}, the replica's table of write fences at
 * that index, {@code fences} ({@link WriteFences}), its shared state at that index, {@code shared}
 * ({@link ReplicaSharedState}), and {@code settled}, the index at which the copy
 * is whole ({@link #settledIndex}). The home files are copied while entries after INDEX go on being
 * applied, so a block in the copy may hold a version from any entry up to the settled index, its data
 * and metadata even from two of them; every such entry is applied again over a restored copy, which
 * makes it whole. These are the files the leader ships to a follower that needs a snapshot; Ratis
 * writes them there on the follower, with an {@code .md5} beside each, and replaces the whole
 * directory with them. A snapshot taken here is written to {@code tmp.snapshot.TERM_INDEX} and
 * renamed, so a directory of that name is complete.
 *
 * <p>A snapshot copied on demand ({@link OnDemandSnapshot}) starts as such a directory with the fence
 * table, the shared state and the marker {@link #ON_DEMAND} only; its copy is written there when a
 * follower needs it ({@link #copyInto}), and the marker goes last, so a directory that still holds it
 * holds no complete copy (whatever a crash left of one is deleted by {@link #load}).
 */
final class VolumeSnapshots implements StateMachineStorage {
    private static final Pattern NAME = Pattern.compile("snapshot\\.(\\d+)_(\\d+)");
    private static final String TMP_PREFIX = "tmp.";
    static final String DATA = "data";
    static final String META = "meta";
    static final String SETTLED = "settled";
    /** The marker of a snapshot whose copy is not made yet ({@link OnDemandSnapshot}). */
    static final String ON_DEMAND = "copy-on-demand";
    /** The suffix of a file of an on-demand copy being written. */
    private static final String PART = ".part";
    /** Runs between the copies of the data and the metadata file: a test holds a copy there while entries apply. */
    static volatile java.util.function.Consumer<ReplicaFiles> betweenCopies = f -> { };

    private volatile File dir;
    private volatile FileListSnapshotInfo latest;
    /** The newest snapshot's index (-1: none) when the directory was last cleaned up; MIN_VALUE before. */
    private volatile long cleanedAt = Long.MIN_VALUE;
    /** How many snapshots to keep: Ratis's retention policy as last seen (one, pistore's setting). */
    private volatile int keep = 1;
    /** Makes the copy of an on-demand snapshot when it is first shipped; set by the state machine. */
    private volatile java.util.function.Function<OnDemandSnapshot, FileListSnapshotInfo> copier = s -> {
        throw new IllegalStateException("snapshot " + s.getTermIndex() + " is not copied yet, and nothing copies it here");
    };

    /** Sets what makes the copy of an on-demand snapshot when a leader ships it. */
    void copyWith(java.util.function.Function<OnDemandSnapshot, FileListSnapshotInfo> c) {
        this.copier = c;
    }

    @Override
    public void init(RaftStorage raftStorage) throws IOException {
        this.dir = raftStorage.getStorageDir().getStateMachineDir();
        PrivateFiles.createDirectories(dir.toPath());
        dropUnfinishedInstalls(raftStorage.getStorageDir().getTmpDir().toPath());
    }

    /**
     * Deletes the directories in which Ratis received snapshots from a leader that never finished
     * (it leaves one per failed installation, e.g. on a full file system): an installation starts
     * over after a start, so none of them is ever used again.
     */
    static void dropUnfinishedInstalls(java.nio.file.Path tmp) throws IOException {
        if (!java.nio.file.Files.isDirectory(tmp)) {
            return;
        }
        try (java.nio.file.DirectoryStream<java.nio.file.Path> ds = java.nio.file.Files.newDirectoryStream(tmp, "snapshot-*")) {
            for (java.nio.file.Path d : ds) {
                try (java.util.stream.Stream<java.nio.file.Path> all = java.nio.file.Files.walk(d)) {
                    for (java.nio.file.Path f : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        java.nio.file.Files.deleteIfExists(f);
                    }
                }
            }
        }
    }

    @Override
    public FileListSnapshotInfo getLatestSnapshot() {
        return latest;
    }

    /** The state machine directory: where the leader's shipped files are found relative to. */
    @Override
    public File getSnapshotDir() {
        return dir;
    }

    @Override
    public void format() {
    }

    /**
     * Finds the newest complete snapshot in the directory, and removes what a crash left: a snapshot
     * half taken, and the one-file markers earlier versions wrote (their log was never purged, so it
     * still holds every entry).
     */
    synchronized FileListSnapshotInfo load() throws IOException {
        Path d = dir.toPath();
        FileListSnapshotInfo found = null;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                Matcher m = NAME.matcher(n);
                if (n.startsWith(TMP_PREFIX) || (n.startsWith("snapshot.") && !Files.isDirectory(p))) {
                    FileUtils.deleteFully(p);
                } else if (m.matches() && Files.isDirectory(p)) {
                    TermIndex ti = TermIndex.valueOf(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)));
                    if (Files.exists(p.resolve(ON_DEMAND))) {
                        dropPartCopy(p); // a copy a crash interrupted: made again when shipped
                    }
                    if (found == null || ti.compareTo(found.getTermIndex()) > 0) {
                        found = info(p, ti);
                    }
                }
            }
        }
        latest = found;
        return found;
    }

    private FileListSnapshotInfo info(Path snapshotDir, TermIndex ti) {
        if (Files.exists(snapshotDir.resolve(ON_DEMAND))) {
            List<FileInfo> small = new ArrayList<>();
            for (String n : List.of(WriteFences.FILE, ReplicaSharedState.FILE)) {
                if (Files.exists(snapshotDir.resolve(n))) {
                    small.add(new FileInfo(snapshotDir.resolve(n), null));
                }
            }
            return new OnDemandSnapshot(snapshotDir, ti, small, c -> copier.apply(c));
        }
        return copied(snapshotDir, ti);
    }

    private static FileListSnapshotInfo copied(Path snapshotDir, TermIndex ti) {
        List<FileInfo> files = new ArrayList<>();
        files.add(new FileInfo(snapshotDir.resolve(DATA), null)); // the digest is computed as it ships
        Path meta = snapshotDir.resolve(META);
        if (Files.exists(meta)) {
            files.add(new FileInfo(meta, null));
        }
        Path fences = snapshotDir.resolve(WriteFences.FILE);
        if (Files.exists(fences)) {
            files.add(new FileInfo(fences, null));
        }
        Path shared = snapshotDir.resolve(ReplicaSharedState.FILE);
        if (Files.exists(shared)) {
            files.add(new FileInfo(shared, null));
        }
        Path settled = snapshotDir.resolve(SETTLED);
        if (Files.exists(settled)) {
            files.add(new FileInfo(settled, null));
        }
        return new FileListSnapshotInfo(files, ti);
    }

    /** The file of a snapshot named {@code name}, or null when it has none; an on-demand one is not copied for it. */
    private static Path file(FileListSnapshotInfo s, String name) {
        for (FileInfo f : s instanceof OnDemandSnapshot o ? o.small() : s.getFiles()) {
            if (f.getPath().getFileName().toString().equals(name)) {
                return f.getPath();
            }
        }
        return null;
    }

    /** The data file of a snapshot, which an on-demand one does not have. */
    static Path data(FileListSnapshotInfo s) throws IOException {
        if (s instanceof OnDemandSnapshot) {
            throw new IOException("snapshot " + s.getTermIndex() + " holds no copy of the volume (it is made when shipped)");
        }
        return s.getFiles().get(0).getPath();
    }

    /** The metadata file of a snapshot; null for a format without metadata. */
    static Path meta(FileListSnapshotInfo s) {
        return file(s, META);
    }

    /**
     * The index from which a replica restored from {@code s} is whole: entries after the snapshot's
     * own index were applied while its files were copied, up to this one. A snapshot without the
     * file (taken before copies went on beside the applier) is whole at its own index.
     */
    static long settledIndex(FileListSnapshotInfo s) throws IOException {
        Path p = s instanceof OnDemandSnapshot ? null : file(s, SETTLED);
        if (p == null) {
            return s.getIndex();
        }
        String t = Files.readString(p, java.nio.charset.StandardCharsets.UTF_8).strip();
        try {
            if (t.startsWith("index ")) {
                return Math.max(s.getIndex(), Long.parseLong(t.substring("index ".length()).strip()));
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IOException("snapshot " + s.getTermIndex() + ": " + p + " is not an index: '" + t + "'");
    }

    /** The write fence table of a snapshot; null for one taken before fences were kept (an empty table). */
    static Path fences(FileListSnapshotInfo s) {
        return file(s, WriteFences.FILE);
    }

    /** The shared state of a snapshot; null for one taken before it was kept (never set). */
    static Path shared(FileListSnapshotInfo s) {
        return file(s, ReplicaSharedState.FILE);
    }

    /**
     * Takes a snapshot at {@code ti} of a replica whose home files hold every entry up to it (a
     * checkpoint): its files copied as they are while entries after it are applied, its fence table and
     * shared state at {@code ti} and the settled index (what {@code applying} says once the copies are done) written
     * beside them, then the directory renamed into place, unless a newer snapshot is there by then.
     * Returns the newest snapshot. Stops with {@link java.nio.channels.ClosedByInterruptException} when
     * its thread is interrupted; a copy that fails or stops deletes its {@code tmp.} directory (one a
     * crash left is deleted by the next {@link #load}).
     */
    FileListSnapshotInfo take(TermIndex ti, ReplicaFiles replica, byte[] fences, byte[] shared,
            java.util.function.LongSupplier applying) throws IOException {
        Path tmp = freshTmp(ti);
        try {
            copyHome(replica, tmp, "", ti.getIndex(), applying);
            writeSmall(tmp, fences, shared);
        } catch (IOException | RuntimeException e) {
            try {
                FileUtils.deleteFully(tmp); // a part copy holds up to a volume's size until the next start otherwise
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        return rename(tmp, ti);
    }

    /** An empty {@code tmp.} directory for the snapshot at {@code ti} (one left there is deleted first). */
    private Path freshTmp(TermIndex ti) throws IOException {
        Path tmp = dir.toPath().resolve(TMP_PREFIX + "snapshot." + ti.getTerm() + "_" + ti.getIndex());
        if (Files.exists(tmp)) {
            FileUtils.deleteFully(tmp);
        }
        PrivateFiles.createDirectories(tmp);
        return tmp;
    }

    /**
     * Renames a snapshot written to {@code tmp} into place, unless a newer snapshot is there by then;
     * returns the newest snapshot.
     */
    private synchronized FileListSnapshotInfo rename(Path tmp, TermIndex ti) throws IOException {
        FileListSnapshotInfo newest = latest;
        if (newest != null && newest.getIndex() >= ti.getIndex()) {
            FileUtils.deleteFully(tmp);
            return newest;
        }
        Path d = dir.toPath();
        Path done = d.resolve("snapshot." + ti.getTerm() + "_" + ti.getIndex());
        Files.move(tmp, done, StandardCopyOption.ATOMIC_MOVE);
        ReplicaFiles.forceDirectory(d);
        FileListSnapshotInfo s = info(done, ti);
        latest = s;
        keepNewest(keep); // each may be a whole volume: the older go now, not when Ratis next asks
        return s;
    }

    /**
     * Takes a snapshot at {@code ti} to be copied on demand ({@link OnDemandSnapshot}): the replica's
     * home files hold every entry up to it (a checkpoint, its index recorded), so only the fence table
     * and shared state at {@code ti} and the marker are written, forced and renamed into place, and
     * the older snapshots go. Returns the newest snapshot.
     */
    FileListSnapshotInfo takeOnDemand(TermIndex ti, byte[] fences, byte[] shared) throws IOException {
        Path tmp = freshTmp(ti);
        PrivateFiles.writeForced(tmp.resolve(ON_DEMAND), "made when shipped\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        writeSmall(tmp, fences, shared);
        return rename(tmp, ti);
    }

    /**
     * Copies the replica's home files into {@code into} as {@code data} and {@code meta} (each name with
     * {@code suffix}) while entries go on being applied, then writes, forced, the index the copies are
     * whole at: what {@code applying} gives once they are done (an entry whose writes they may hold had
     * started by then), at least {@code index}.
     */
    private static void copyHome(ReplicaFiles replica, Path into, String suffix, long index,
            java.util.function.LongSupplier applying) throws IOException {
        replica.copyHomeFile(false, into.resolve(DATA + suffix));
        betweenCopies.accept(replica);
        if (replica.hasMetadata()) {
            replica.copyHomeFile(true, into.resolve(META + suffix));
        }
        long settled = Math.max(index, applying.getAsLong());
        PrivateFiles.writeForced(into.resolve(SETTLED + suffix), ("index " + settled + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Writes, forced, a snapshot's fence table and shared state into {@code into}, and forces the directory. */
    private static void writeSmall(Path into, byte[] fences, byte[] shared) throws IOException {
        PrivateFiles.writeForced(into.resolve(WriteFences.FILE), fences);
        PrivateFiles.writeForced(into.resolve(ReplicaSharedState.FILE), shared);
        ReplicaFiles.forceDirectory(into);
    }

    /**
     * Makes the copy of on-demand snapshot {@code s} in its directory: the replica's home files copied
     * as they are while entries go on being applied (each block as of an entry from the snapshot's
     * index to the settled one, which {@code applying} gives after the copies), then the files
     * renamed into place and the marker deleted, each step forced. Returns the copied snapshot, the
     * newest from then on if {@code s} still was. A copy that fails or stops deletes what it wrote.
     */
    FileListSnapshotInfo copyInto(OnDemandSnapshot s, ReplicaFiles replica, java.util.function.LongSupplier applying)
            throws IOException {
        Path d = s.dir();
        try {
            dropPartCopy(d);
            copyHome(replica, d, PART, s.getIndex(), applying);
            for (String n : List.of(DATA, META, SETTLED)) {
                if (Files.exists(d.resolve(n + PART))) {
                    Files.move(d.resolve(n + PART), d.resolve(n), StandardCopyOption.ATOMIC_MOVE);
                }
            }
            ReplicaFiles.forceDirectory(d);
            synchronized (this) {
                Files.delete(d.resolve(ON_DEMAND)); // NoSuchFileException: the snapshot was deleted meanwhile
                ReplicaFiles.forceDirectory(d);
                FileListSnapshotInfo c = copied(d, s.getTermIndex());
                if (latest == s) {
                    latest = c;
                }
                return c;
            }
        } catch (IOException | RuntimeException e) {
            try {
                if (Files.exists(d.resolve(ON_DEMAND))) {
                    dropPartCopy(d); // a part copy holds up to a volume's size until the next start otherwise
                }
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /** Deletes what an unfinished copy of an on-demand snapshot wrote in its directory {@code d}. */
    private static void dropPartCopy(Path d) throws IOException {
        for (String n : List.of(DATA, META, SETTLED)) {
            Files.deleteIfExists(d.resolve(n + PART));
            Files.deleteIfExists(d.resolve(n));
        }
    }

    /**
     * Keeps the newest snapshots (as many as the policy says, at least the newest) and deletes the
     * rest: each is a copy of the whole volume. Ratis calls this after each snapshot it asks for,
     * also when the state machine declined to take one (not enough data yet): the directory is then
     * looked at again only once the newest snapshot has changed.
     */
    @Override
    public void cleanupOldSnapshots(SnapshotRetentionPolicy policy) throws IOException {
        FileListSnapshotInfo newest = latest;
        long at = newest == null ? -1 : newest.getIndex();
        keep = Math.max(1, policy == null ? 1 : policy.getNumSnapshotsRetained());
        if (at == cleanedAt) {
            return;
        }
        keepNewest(keep);
        cleanedAt = at;
    }

    /** Deletes every complete snapshot but the {@code n} newest. */
    private synchronized void keepNewest(int n) throws IOException {
        List<Path> all = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir.toPath())) {
            for (Path p : ds) {
                if (NAME.matcher(p.getFileName().toString()).matches() && Files.isDirectory(p)) {
                    all.add(p);
                }
            }
        }
        all.sort(Comparator.comparing(VolumeSnapshots::termIndex).reversed());
        for (Path old : all.subList(Math.min(n, all.size()), all.size())) {
            FileUtils.deleteFully(old); // a leader shipping it keeps reading a file it has open
        }
    }

    private static TermIndex termIndex(Path p) {
        Matcher m = NAME.matcher(p.getFileName().toString());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a snapshot directory: " + p);
        }
        return TermIndex.valueOf(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)));
    }
}
