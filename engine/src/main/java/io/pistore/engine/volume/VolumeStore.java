package io.pistore.engine.volume;

import io.pistore.engine.volume.file.FileVolume;
import io.pistore.engine.volume.file.VolumeFiles;
import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The volumes of one target: either a directory of file volumes, each described by a manifest
 * {@code NAME.volume} (see docs/FORMAT.md), or an in-memory set. Creating writes the data and
 * metadata files first and the manifest last (atomically, by rename), so a crash never leaves a
 * manifest without its files; deleting removes the manifest first. A directory store has one owner:
 * while it is open, its process holds the directory's lock ({@link DataDirLock}) and every other open
 * of that directory, in this process or another, is refused. Thread-safe.
 */
public final class VolumeStore implements AutoCloseable {
    public static final String MANIFEST_SUFFIX = ".volume";
    /**
     * A frontend's persistent reservations of the volume kept through a restart (iSCSI APTPL):
     * written by the frontend, deleted with the volume (first, so a crash never hands them to a
     * new volume of the same name).
     */
    public static final String RESERVATIONS_SUFFIX = ".reservations";
    private static final String JOURNAL_SUFFIX = ".journal";
    /** A home file's copy on its way in during a {@link #restore}: left over only by a crash, then ignored. */
    private static final String RESTORE_SUFFIX = ".restore";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    /** What the lock file says of an owner that did not say what it is doing. */
    public static final String DEFAULT_OWNER = "pistore engine";

    private final Path dir;
    private final long cacheBytes;
    private final Map<String, GatedVolume> volumes = new ConcurrentHashMap<>();
    /** Names of the volumes {@link #attach attached} here: served, closed with the store, never deleted from its directory. */
    private final java.util.Set<String> attached = ConcurrentHashMap.newKeySet();
    private final List<String> openProblems = new ArrayList<>();
    private final List<String> openNotes = new ArrayList<>();
    /** The directory's one-owner lock; null for a memory store, which nothing else can reach. */
    private final DataDirLock lock;
    /**
     * One daemon thread for the idle ticks of this store's file volumes (it only starts their
     * checkpoints), started with the first of them and shut down after they are closed; null for a
     * memory store.
     */
    private final ScheduledExecutorService idle;

    private VolumeStore(Path dir, long cacheBytes, DataDirLock lock) {
        this.dir = dir;
        this.cacheBytes = cacheBytes;
        this.lock = lock;
        this.idle = dir == null ? null : idleTicker(dir);
    }

    private static ScheduledExecutorService idleTicker(Path dir) {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "pistore-journal-idle " + dir.getFileName());
            t.setDaemon(true);
            return t;
        });
        e.setRemoveOnCancelPolicy(true);
        return e;
    }

    /** A store whose volumes live in memory only. */
    public static VolumeStore inMemory() {
        return new VolumeStore(null, 0, null);
    }

    /**
     * Opens (creating if needed) a directory store and every volume in it. A volume that cannot be
     * opened is left closed and named in {@link #openProblems()}; the others still open.
     */
    public static VolumeStore open(Path dir) throws IOException {
        return open(dir, 0);
    }

    /**
     * As {@link #open(Path)}, with a read cache of up to {@code cacheBytes} of hot blocks and their
     * metadata in front of each file volume (0: no cache); see {@link CachingVolume}.
     */
    public static VolumeStore open(Path dir, long cacheBytes) throws IOException {
        return open(dir, cacheBytes, DEFAULT_OWNER);
    }

    /**
     * As {@link #open(Path, long)}, saying in the directory's lock file what this process is doing
     * ({@code owner}, one line, e.g. {@code pistore serve}), so that an open refused elsewhere can
     * name it.
     *
     * @throws DataDirInUseException when another store, in this process or another, has it open
     */
    public static VolumeStore open(Path dir, long cacheBytes, String owner) throws IOException {
        if (cacheBytes < 0) {
            throw new IllegalArgumentException("cache size must not be negative");
        }
        PrivateFiles.createDirectories(dir);
        VolumeStore s = new VolumeStore(dir, cacheBytes, DataDirLock.acquire(dir, owner));
        PrivateFiles.warnings(dir).forEach(w -> s.openNotes.add("warning: " + w));
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + MANIFEST_SUFFIX)) {
            for (Path manifest : ds) {
                String file = manifest.getFileName().toString();
                String name = file.substring(0, file.length() - MANIFEST_SUFFIX.length());
                try {
                    s.volumes.put(name, new GatedVolume(s.cached(s.openFileVolume(name, manifest))));
                } catch (IOException | RuntimeException e) {
                    s.openProblems.add("volume " + name + " not opened: " + e.getMessage()
                            + (String.valueOf(e.getMessage()).contains("No space left on device")
                            ? " (opening writes its journal's records home: make room on the file system of " + dir + ")"
                            : ""));
                }
            }
            long toGrow = VolumeSpace.journalsToGrow(dir, s.fileVolumes(), FileVolume.inMemory(dir));
            long free = VolumeSpace.free(dir);
            if (free >= 0 && toGrow > free) {
                s.openNotes.add("warning: the journals of the volumes in " + dir + " are still to grow by "
                        + ByteCount.format(toGrow) + ", and its file system has " + ByteCount.format(free)
                        + " free: writes fail once it is full");
            }
        } catch (IOException | RuntimeException e) {
            try {
                s.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return s;
    }

    private static void deleteAll(Path... files) throws IOException {
        for (Path f : files) {
            Files.deleteIfExists(f);
        }
    }

    /** The volumes whose files are in this store's directory (not the attached ones), by name. */
    Map<String, Volume> fileVolumes() {
        Map<String, Volume> m = new java.util.HashMap<>(volumes);
        attached.forEach(m::remove);
        return m;
    }

    /** Whether the volumes are durable files. */
    public boolean isDurable() {
        return dir != null;
    }

    /**
     * One line per volume whose opening did more than open files: a journal replayed after a crash,
     * a volume converted from manifest version 1; and a line starting {@code warning: } for the
     * directory, and for each volume, whose files give group or others access (a directory made by
     * an earlier version: nothing changes their modes, the line names the fix).
     */
    public List<String> openNotes() {
        return Collections.unmodifiableList(openNotes);
    }

    /** One line per volume that failed to open, with the reason. */
    public List<String> openProblems() {
        return Collections.unmodifiableList(openProblems);
    }

    public static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("volume name must be 1-64 characters of letters, digits, '.', '_' or '-',"
                    + " starting with a letter or digit, not '" + name + "'");
        }
    }

    /** Creates a volume of {@code blocks} blocks. */
    public synchronized Volume create(String name, BlockFormat format, long blocks) throws IOException {
        checkName(name);
        if (blocks <= 0) {
            throw new IllegalArgumentException("volume size must be at least one block");
        }
        if (volumes.containsKey(name)) {
            throw new IllegalArgumentException("volume " + name + " already exists");
        }
        Volume v;
        if (dir == null) {
            v = new MemoryVolume(name, format, blocks);
        } else {
            Path manifest = dir.resolve(name + MANIFEST_SUFFIX);
            if (Files.exists(manifest)) {
                throw new IllegalArgumentException("volume " + name + " already exists in " + dir);
            }
            Path data = dir.resolve(name + ".data");
            Path meta = dir.resolve(name + ".meta");
            Path journal = dir.resolve(name + JOURNAL_SUFFIX);
            // Leftovers of a create that crashed before its manifest was written.
            deleteAll(data, meta, journal);
            VolumeSpace.checkRoomFor(dir, name, format, blocks, fileVolumes());
            try {
                v = cached(FileVolume.create(data, meta, journal, name, format, blocks, idle));
            } catch (IOException | RuntimeException e) {
                // a create that failed (a file system full) leaves nothing to fill it further
                deleteAll(data, meta, journal);
                throw e;
            }
            try {
                new VolumeManifest(VolumeManifest.CURRENT, name, format, blocks, -1).write(manifest);
            } catch (IOException e) {
                v.close();
                deleteAll(data, meta, journal);
                throw e;
            }
        }
        GatedVolume g = new GatedVolume(v);
        volumes.put(name, g);
        return g;
    }

    /**
     * Serves a volume whose storage this store does not own (a replicated volume keeps its replicas
     * elsewhere): it is listed and found like the others and closed with the store; {@link #delete}
     * closes and forgets it without touching this store's directory.
     */
    public synchronized void attach(Volume v) {
        checkName(v.name());
        if (volumes.containsKey(v.name()) || (dir != null && Files.exists(dir.resolve(v.name() + MANIFEST_SUFFIX)))) {
            throw new IllegalArgumentException("volume " + v.name() + " already exists");
        }
        volumes.put(v.name(), new GatedVolume(v));
        attached.add(v.name());
    }

    /**
     * Deletes a volume and its files (an attached volume: closes and forgets it). Requests already
     * inside the volume finish first; those that arrive later, or wait at a paused volume, fail with
     * {@link VolumeGoneException}.
     */
    public synchronized void delete(String name) throws IOException {
        GatedVolume v = volumes.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no volume named " + name);
        }
        pause(v); // requests that find it from now on wait, then learn it is gone
        volumes.remove(name);
        v.retire();
        v.close();
        if (dir != null) {
            Files.deleteIfExists(dir.resolve(name + RESERVATIONS_SUFFIX));
        }
        if (attached.remove(name)) {
            return;
        }
        if (dir != null) {
            Files.deleteIfExists(dir.resolve(name + MANIFEST_SUFFIX));
            syncDirectory(dir);
            Files.deleteIfExists(dir.resolve(name + ".data"));
            Files.deleteIfExists(dir.resolve(name + ".meta"));
            Files.deleteIfExists(dir.resolve(name + JOURNAL_SUFFIX));
            Files.deleteIfExists(dir.resolve(name + ".data" + RESTORE_SUFFIX));
            Files.deleteIfExists(dir.resolve(name + ".meta" + RESTORE_SUFFIX));
        }
    }

    /**
     * Grows a volume of a data directory to {@code blocks} blocks while it may be in use: requests
     * wait at the volume while its files are extended (new blocks read as unwritten) and reopened.
     * The manifest records the resize before the files change and its new size after, so a crash
     * in between is rolled back on the next open. Shrinking is refused: it would drop data.
     */
    public synchronized void resize(String name, long blocks) throws IOException {
        GatedVolume v = volumes.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no volume named " + name);
        }
        if (dir == null) {
            throw new IllegalArgumentException("volume " + name + " is in memory; only volumes of a data directory resize");
        }
        if (attached.contains(name)) {
            throw new IllegalArgumentException("volume " + name + " is not stored in this data directory"
                    + " (a replicated volume); it does not resize");
        }
        long old = v.blockCount();
        if (blocks < old) {
            throw new IllegalArgumentException("volume " + name + " has " + old + " blocks; shrinking to " + blocks
                    + " would drop data and is not supported");
        }
        if (blocks == old) {
            return;
        }
        BlockFormat f = v.format();
        Path manifest = dir.resolve(name + MANIFEST_SUFFIX);
        pause(v);
        Volume storage = null;
        try {
            v.storage().close(); // closed cleanly: the journal is empty, the home files hold every block
            VolumeManifest m = VolumeManifest.read(manifest);
            m.sized(old, blocks).write(manifest);
            VolumeFiles.grow(dir.resolve(name + ".data"), f.metadataSize() > 0 ? dir.resolve(name + ".meta") : null,
                    f, old, blocks, m.xorMetadata());
            m.sized(blocks, -1).write(manifest);
            storage = cached(openFileVolume(name, manifest));
        } finally {
            if (storage != null) {
                v.resume(storage);
            } else {
                reopenAfterFailed(v, name, manifest, "resize");
            }
        }
    }

    /** After a resize or restore failed part-way: reopened as the next open would find it, or retired. */
    private void reopenAfterFailed(GatedVolume v, String name, Path manifest, String what) {
        try {
            v.resume(cached(openFileVolume(name, manifest)));
        } catch (IOException | RuntimeException e) {
            volumes.remove(name);
            v.retire();
            openProblems.add("volume " + name + " not reopened after a failed " + what + ": " + e.getMessage());
        }
    }

    private static void pause(GatedVolume v) throws IOException {
        try {
            v.pause();
        } catch (InterruptedException e) {
            v.resume(v.storage());
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for the requests of volume "
                    + v.name() + " to finish");
        }
    }

    /** How much a volume is used: requests ever entered and those inside now. */
    public record Activity(long requestsEntered, long inFlight) {
    }

    /** The activity of the volume of that name, or null when there is none. */
    public Activity activity(String name) {
        GatedVolume v = volumes.get(name);
        return v == null ? null : new Activity(v.requestsEntered(), v.inFlight());
    }

    /**
     * Applies the journal of a file volume to its home files and forces them now (as the background
     * checkpoint would later), so that the home files hold every block written so far: for tools and
     * tests that read or change the files at rest; through the block cache too (a checkpoint changes
     * no block, so what the cache holds stays right). Nothing for a memory volume.
     */
    public void checkpoint(String name) throws IOException {
        GatedVolume v = volumes.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no volume named " + name);
        }
        FileVolume f = fileVolume(v);
        if (f != null) {
            f.checkpoint();
        }
    }

    /**
     * Copies a file volume's home files, after a {@link #checkpoint}, to {@code dataCopy} and
     * {@code metaCopy} (the latter not written when the format has no metadata), each forced: an image
     * of the volume that {@link #restore} can bring back. The copy is consistent only if nothing
     * writes the volume meanwhile; the caller sees to that (a replica's one applier thread takes it
     * between two entries). Reads go on while it copies.
     */
    public void copyHomeFiles(String name, Path dataCopy, Path metaCopy) throws IOException {
        GatedVolume v = volumeWithFiles(name);
        checkpoint(name);
        copyHomeFile(name, false, dataCopy);
        if (v.format().metadataSize() > 0) {
            copyHomeFile(name, true, metaCopy);
        }
    }

    /**
     * Copies one home file of a file volume ({@code NAME.meta} if {@code metadata}, else
     * {@code NAME.data}) as it is, forced, while the volume may be written: a fuzzy image. Each block
     * in it holds whatever version the file had when the copy passed it, and a block written meanwhile
     * may hold its data of one version and its metadata of another. Such an image is good only to a
     * caller that had every block written before the copy started moved home ({@link #checkpoint})
     * and writes every block changed since again over the restored image, as a replica replaying its
     * log does.
     */
    public void copyHomeFile(String name, boolean metadata, Path copy) throws IOException {
        GatedVolume v = volumeWithFiles(name);
        if (metadata && v.format().metadataSize() == 0) {
            throw new IllegalArgumentException("volume " + name + " has no metadata file");
        }
        if (metadata && VolumeManifest.read(dir.resolve(name + MANIFEST_SUFFIX)).xorMetadata()) {
            VolumeFiles.copyRecoded(dir.resolve(name + ".meta"), copy, v.format()); // the image holds it as it is
        } else {
            VolumeFiles.copySparse(dir.resolve(name + (metadata ? ".meta" : ".data")), copy);
        }
    }

    /**
     * Replaces a file volume's content with an image that {@link #copyHomeFiles} made of a volume of
     * the same format and size. The image is first copied beside the home files ({@code NAME.data.restore},
     * {@code NAME.meta.restore}) and forced; then requests wait at the volume while it is closed (its
     * journal is emptied and marked clean), the copies are renamed over the home files, the directory
     * is forced, and it reopens. A crash part-way can leave one home file old and one new; the caller
     * must then restore again before anyone reads (a replica keeps a record of the image it holds).
     */
    public synchronized void restore(String name, Path dataImage, Path metaImage) throws IOException {
        GatedVolume v = volumeWithFiles(name);
        BlockFormat f = v.format();
        long blocks = v.blockCount();
        boolean hasMeta = f.metadataSize() > 0;
        checkImage(name, dataImage, blocks * f.dataSize());
        if (hasMeta) {
            checkImage(name, metaImage, blocks * f.metadataSize());
        }
        Path data = dir.resolve(name + ".data");
        Path meta = dir.resolve(name + ".meta");
        Path dataTmp = dir.resolve(name + ".data" + RESTORE_SUFFIX);
        Path metaTmp = dir.resolve(name + ".meta" + RESTORE_SUFFIX);
        VolumeFiles.copySparse(dataImage, dataTmp);
        if (hasMeta && VolumeManifest.read(dir.resolve(name + MANIFEST_SUFFIX)).xorMetadata()) {
            VolumeFiles.copyRecoded(metaImage, metaTmp, f); // the image holds metadata as it is
        } else if (hasMeta) {
            VolumeFiles.copySparse(metaImage, metaTmp);
        }
        pause(v);
        Volume storage = null;
        try {
            v.storage().close(); // closed cleanly: the journal is empty, so nothing replays over the image
            Files.move(dataTmp, data, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            if (hasMeta) {
                Files.move(metaTmp, meta, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            syncDirectory(dir);
            storage = cached(openFileVolume(name, dir.resolve(name + MANIFEST_SUFFIX)));
        } finally {
            if (storage != null) {
                v.resume(storage);
            } else {
                reopenAfterFailed(v, name, dir.resolve(name + MANIFEST_SUFFIX), "restore");
            }
        }
    }

    private static void checkImage(String name, Path image, long want) throws IOException {
        if (image == null || !Files.isRegularFile(image)) {
            throw new IOException("volume " + name + ": no image file " + image);
        }
        long size = Files.size(image);
        if (size != want) {
            throw new IOException("volume " + name + ": image " + image + " has " + size + " bytes, the volume " + want);
        }
    }

    /** The file volume of that name, of this directory (not attached, not in memory). */
    private GatedVolume volumeWithFiles(String name) {
        GatedVolume v = volumes.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no volume named " + name);
        }
        if (dir == null || attached.contains(name)) {
            throw new IllegalArgumentException("volume " + name + " has no files in this data directory");
        }
        return v;
    }

    /** The journal figures of the file volume of that name; null for any other volume or none. */
    public JournalFigures journalFigures(String name) {
        FileVolume f = fileVolume(volumes.get(name));
        return f == null ? null : f.journalFigures();
    }

    /** The file volume a store's volume keeps its blocks in, behind the block cache if it has one; else null. */
    private static FileVolume fileVolume(GatedVolume v) {
        Volume s = v == null ? null : v.storage();
        if (s instanceof CachingVolume c) {
            s = c.inner();
        }
        return s instanceof FileVolume f ? f : null;
    }

    /** The cache figures of the volume of that name; null without a cache ({@code --cache}) or volume. */
    public CacheFigures cacheFigures(String name) {
        GatedVolume v = volumes.get(name);
        return v != null && v.storage() instanceof CachingVolume c ? c.figures() : null;
    }

    /** The volume of that name, or null. */
    public Volume get(String name) {
        return volumes.get(name);
    }

    /** What volume {@code name} is behind the store's gate (an attached volume itself, say), or null. */
    public Volume storage(String name) {
        GatedVolume v = volumes.get(name);
        return v == null ? null : v.storage();
    }

    /** The volumes, sorted by name. */
    public List<Volume> list() {
        return new ArrayList<>(new TreeMap<>(volumes).values());
    }

    /**
     * Closes every volume, then gives the directory up: whatever a volume's close throws (an I/O error,
     * or a bug's runtime exception), the others are closed and the lock is released, so the next owner
     * (this process reopening it, or another) is never refused by a store that is gone. The first
     * failure is thrown at the end, the others suppressed in it.
     */
    @Override
    public synchronized void close() throws IOException {
        IOException first = null;
        for (GatedVolume v : volumes.values()) {
            try {
                v.close();
            } catch (IOException | RuntimeException e) {
                IOException io = e instanceof IOException x ? x
                        : new IOException("volume " + v.name() + " did not close: " + e, e);
                if (first == null) {
                    first = io;
                } else {
                    first.addSuppressed(io);
                }
            }
        }
        volumes.clear();
        attached.clear();
        if (idle != null) {
            idle.shutdownNow(); // after the volumes, which cancelled their ticks
            try {
                if (!idle.awaitTermination(10, TimeUnit.SECONDS) && first == null) {
                    first = new IOException("the idle tick of " + dir + " did not stop within 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (lock != null) {
            try {
                lock.close(); // after the volumes: the next owner finds them closed
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private Volume cached(Volume v) {
        return cacheBytes > 0 ? new CachingVolume(v, cacheBytes) : v;
    }

    private Volume openFileVolume(String name, Path manifest) throws IOException {
        VolumeManifest m = VolumeManifest.read(manifest);
        if (!name.equals(m.name())) {
            throw new IOException("manifest " + manifest.getFileName() + " names volume " + m.name());
        }
        Path journal = dir.resolve(name + JOURNAL_SUFFIX);
        if (m.resizeTo() >= 0) {
            rollBackResize(manifest, m);
        }
        if (m.version() == VolumeManifest.UNJOURNALED) {
            upgrade(manifest, journal, m);
        }
        return FileVolume.open(dir.resolve(name + ".data"), dir.resolve(name + ".meta"), journal, name, m.format(),
                m.blocks(), idle, openNotes::add, m.xorMetadata());
    }

    /**
     * Converts a volume of manifest version 1 (no journal) in place: its data and metadata files stay
     * as they are; an empty journal is created and forced, then the version-2 manifest (metadata held
     * as it is, as version 1 held it) replaces the old one atomically. A crash before the rename
     * leaves a version-1 volume, converted again next time.
     */
    private void upgrade(Path manifest, Path journal, VolumeManifest m) throws IOException {
        long wantData = m.blocks() * m.format().dataSize();
        Path data = dir.resolve(m.name() + ".data");
        if (Files.size(data) != wantData) { // checked before anything is written
            throw new IOException("volume " + m.name() + ": " + data + " has " + Files.size(data)
                    + " bytes, the manifest says " + wantData);
        }
        FileVolume.createJournal(journal, m.format());
        syncDirectory(dir);
        new VolumeManifest(VolumeManifest.PLAIN_METADATA, m.name(), m.format(), m.blocks(), -1).write(manifest);
        openNotes.add(m.name() + ": converted from manifest version " + VolumeManifest.UNJOURNALED + " to "
                + VolumeManifest.PLAIN_METADATA + " (created " + journal.getFileName() + ")");
    }

    /**
     * A resize that a crash interrupted: the manifest still has the old size and names the new
     * one; the files may be longer than the old size. Nothing was ever written past the old end, so
     * cutting the files back to it loses nothing.
     */
    private void rollBackResize(Path manifest, VolumeManifest m) throws IOException {
        VolumeFiles.truncate(dir.resolve(m.name() + ".data"),
                m.format().metadataSize() > 0 ? dir.resolve(m.name() + ".meta") : null, m.format(), m.blocks());
        m.sized(m.blocks(), -1).write(manifest);
        openNotes.add(m.name() + ": a resize to " + m.resizeTo() + " blocks did not finish; rolled back to "
                + m.blocks() + " blocks");
    }

    /** fsync of a directory, so that a created, renamed or removed name is durable. */
    static void syncDirectory(Path dir) {
        try (FileChannel c = FileChannel.open(dir, StandardOpenOption.READ)) {
            c.force(true);
        } catch (IOException e) {
            // Some file systems refuse to open directories; the rename is still ordered after the data.
        }
    }
}
