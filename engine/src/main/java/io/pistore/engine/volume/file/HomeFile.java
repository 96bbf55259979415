package io.pistore.engine.volume.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;

/**
 * How checkpoints and recovery write a home file ({@code NAME.data} or {@code NAME.meta}): through
 * shared read-write mappings where the storage has them, else with positional writes; {@link #sync}
 * forces both. A checkpoint writes thousands of scattered blocks at a time; a store into a mapping
 * costs a copy where a positional write costs a system call as well. But the first store into a
 * page through a mapping faults, and on tmpfs a page never written before is allocated and zeroed
 * in that fault, which costs more than the system call it saves. So the first write to each page
 * since open is positional (the kernel allocates the page without a fault) and later ones go through
 * the mapping, whatever their size: a store into a hole of a full tmpfs faults with SIGBUS, which the
 * JVM may report later, past any handler. (Volumes on tmpfs write through, {@link #writeShared}, so
 * only recovery and a heal write home here.) Figures: docs/FORMAT.md#cpu-per-write-on-tmpfs and
 * docs/history.md#crash-atomic-file-volumes.
 * Only checkpoints and recovery call {@link #write}, one at a time (each checkpoint waits for the one
 * before it), so it is not thread-safe; {@link #writeShared} is, for volumes whose writers write
 * their home blocks themselves (FileVolume's write-through mode).
 *
 * <p>Nothing changes in what reaches the disk when: a store into a shared mapping is a change to
 * the same page cache a positional write changes, written back whenever the kernel likes until
 * {@link #sync} forces it ({@code msync}), and home files are written only with journal records
 * already durable.
 */
final class HomeFile {
    private static final int PAGE = 4096;
    private final StorageFile file;
    private final String what;
    private final long size;
    private final long segment;
    private final MappedByteBuffer[] maps;
    private final boolean[] dirty;
    /** One bit per page of the file: set once a write reached that page since open. */
    private final long[] pagesWritten;
    /** False once the storage had no mapping to give: every write is positional from then on. */
    private volatile boolean mappable;
    /** Set by any positional write (by several writers at once in {@link #writePositional}); cleared by a sync. */
    private volatile boolean wroteThroughFile;
    /** How the bytes written are stored (the metadata file of a version-3 volume), or null: as they are. */
    private final MetadataCoding coding;

    /**
     * A home file of {@code size} bytes, mapped in pieces of {@code segment} bytes (a whole number
     * of blocks, so a block never straddles two) as writes first reach them; every write is encoded
     * with {@code coding} on its way (null: none).
     */
    HomeFile(StorageFile file, String what, long size, long segment, MetadataCoding coding) {
        this.coding = coding;
        this.file = file;
        this.what = what;
        this.size = size;
        this.segment = segment;
        int n = (int) ((size + segment - 1) / segment);
        this.maps = new MappedByteBuffer[n];
        this.dirty = new boolean[n];
        this.mappable = size > 0;
        this.pagesWritten = new long[(int) ((size / PAGE + 1 + 63) / 64)];
    }

    /** Writes {@code src} (all of it) at {@code pos}. */
    void write(ByteBuffer src, long pos) throws IOException {
        if (coding != null) {
            src = coding.encoded(src, pos);
        }
        int len = src.remaining();
        if (mappable && len > 0 && !pagesWritten(pos, len)) {
            // A page not written since open may be a hole, which a store through the mapping would
            // allocate in a fault, and on a full tmpfs that fault is a SIGBUS the JVM may report
            // later, past any handler: positional, and the pages count as written once it landed.
            rawPositional(src, pos);
            markPagesWritten(pos, len);
            return;
        }
        while (mappable && src.hasRemaining()) {
            int seg = (int) (pos / segment);
            MappedByteBuffer m = map(seg);
            if (m == null) {
                break;
            }
            pos += store(m, seg, src, pos);
            dirty[seg] = true;
        }
        if (src.hasRemaining()) {
            rawPositional(src, pos);
        }
    }

    /**
     * Writes {@code src} at {@code pos} with a positional write, touching nothing else of this
     * object's state: for the writers of a volume that writes its home files as requests come (files
     * in memory), several at once, each holding its blocks' locks. A {@link #sync} there runs with
     * every block lock held, so after them all.
     */
    void writePositional(ByteBuffer src, long pos) throws IOException {
        rawPositional(coding == null ? src : coding.encoded(src, pos), pos);
    }

    private void rawPositional(ByteBuffer src, long pos) throws IOException {
        file.write(src, pos);
        wroteThroughFile = true;
    }

    /**
     * As {@link #writePositional}, for the same writers, but only the first write to a page since
     * open is positional (the kernel allocates a page never written without a fault); later ones
     * store through the mapping, whatever their size: a store costs a copy, a {@code pwrite} a system
     * call and a page-cache lookup as well, and each page's mapping faults in once, on its second
     * write. Both home files: the metadata file's few pages are all written within the first
     * thousands of random writes; the data file's over the volume's life. A {@link #sync} there runs
     * with every block lock held, so after them all. A page is marked only once a positional write
     * to it landed, so no store ever reaches a hole (a failed write may have left one); until then
     * writers of other blocks in the page (blocks smaller than a page) write positionally too. The
     * page bits and mappings are set atomically.
     */
    void writeShared(ByteBuffer src, long pos) throws IOException {
        if (coding != null) {
            src = coding.encoded(src, pos);
        }
        int len = src.remaining();
        if (!mappable || len == 0 || !pagesWritten(pos, len)) {
            rawPositional(src, pos);
            markPagesWritten(pos, len); // only once it landed: a write that failed (tmpfs full) may have left a hole
            return;
        }
        while (src.hasRemaining()) {
            int seg = (int) (pos / segment);
            MappedByteBuffer m = (MappedByteBuffer) MAPS.getAcquire(maps, seg);
            if (m == null) {
                m = mapShared(seg);
                if (m == null) {
                    rawPositional(src, pos);
                    return;
                }
            }
            pos += store(m, seg, src, pos);
            if (!dirty[seg]) {
                dirty[seg] = true; // read by a sync, which holds every block lock: after this writer's unlock
            }
        }
    }

    /**
     * Stores as much of {@code src} as fits in mapped segment {@code seg} at file position
     * {@code pos}, advancing {@code src}; returns the bytes stored.
     */
    private int store(MappedByteBuffer m, int seg, ByteBuffer src, long pos) throws IOException {
        int at = (int) (pos - seg * segment);
        int n = (int) Math.min(src.remaining(), segment - at);
        try {
            m.put(at, src, src.position(), n);
        } catch (InternalError e) {
            // The JVM reports a fault in mapped memory (no space for the page, an I/O error) this way.
            throw new IOException(what + ": cannot write at " + pos + ": " + e.getMessage(), e);
        }
        src.position(src.position() + n);
        return n;
    }

    /** {@link #map}, for several writers at once. */
    private synchronized MappedByteBuffer mapShared(int seg) throws IOException {
        MappedByteBuffer m = (MappedByteBuffer) MAPS.getAcquire(maps, seg);
        if (m == null && mappable) {
            long at = seg * segment;
            ByteBuffer b = file.mapReadWrite(at, Math.min(segment, size - at));
            if (!(b instanceof MappedByteBuffer mb)) {
                mappable = false;
                return null;
            }
            MAPS.setRelease(maps, seg, mb);
            m = mb;
        }
        return m;
    }

    private static final java.lang.invoke.VarHandle BITS =
            java.lang.invoke.MethodHandles.arrayElementVarHandle(long[].class);
    private static final java.lang.invoke.VarHandle MAPS =
            java.lang.invoke.MethodHandles.arrayElementVarHandle(MappedByteBuffer[].class);

    /**
     * Whether every page of {@code [pos, pos + len)} was written since open. The bits are read and set
     * atomically: write-through writers ({@link #writeShared}) run several at once.
     */
    private boolean pagesWritten(long pos, int len) {
        for (long p = pos / PAGE, last = (pos + len - 1) / PAGE; p <= last; p++) {
            if (((long) BITS.getAcquire(pagesWritten, (int) (p >>> 6)) & (1L << (p & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Marks every page of {@code [pos, pos + len)} written, atomically. */
    private void markPagesWritten(long pos, int len) {
        for (long p = pos / PAGE, last = (pos + len - 1) / PAGE; p <= last; p++) {
            BITS.getAndBitwiseOr(pagesWritten, (int) (p >>> 6), 1L << (p & 63));
        }
    }

    private MappedByteBuffer map(int seg) throws IOException {
        MappedByteBuffer m = maps[seg];
        if (m == null) {
            long at = seg * segment;
            ByteBuffer b = file.mapReadWrite(at, Math.min(segment, size - at));
            if (!(b instanceof MappedByteBuffer mb)) {
                mappable = false;
                return null;
            }
            maps[seg] = m = mb;
        }
        return m;
    }

    /** Makes every write so far durable: forces the mappings written since the last sync, and the file. */
    void sync() throws IOException {
        for (int i = 0; i < maps.length; i++) {
            if (dirty[i]) {
                try {
                    maps[i].force();
                } catch (java.io.UncheckedIOException e) {
                    throw e.getCause();
                }
                dirty[i] = false;
            }
        }
        boolean mapped = false;
        for (MappedByteBuffer m : maps) {
            mapped |= m != null;
        }
        if (wroteThroughFile || !mapped) {
            file.sync();
            wroteThroughFile = false;
        }
    }
}
