package io.pistore.replication.raft;

import io.pistore.engine.volume.PrivateFiles;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteOutput;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The data of a replica's log entries, kept beside the Raft log (whose entries then hold only a
 * header, {@link EntryData}): records appended in index order to segment files {@code
 * data-INDEX} in one directory, each {@code magic(4) index(8) length(4) crc32c(4) bytes}. Indexes
 * rise along the files but need not be contiguous (entries without data have no record).
 *
 * <p>What may be lost: only a tail. A crash can tear the last record of the last file; opening finds
 * the first record whose header or checksum does not hold and drops it and everything after it. The
 * caller makes a record durable ({@link #force}) before the Raft log may name its entry, so a torn
 * record is never one the log holds.
 *
 * <p>Where the directory is in memory (tmpfs, ramfs), a file whose records were all dropped is kept,
 * renamed {@code spare-N} and mapped, for a new segment to take ({@link #MOST_SPARES} at most): its
 * pages are there, so an append is a copy into the mapping, with no system call and no page to
 * allocate. Its old records stay behind the new ones: a record counts only while the indexes rise
 * from the one the file is named by, so the first old record ends the file at open. Into a mapping
 * the record's bytes go first and its header last, so a record cut short by a crash has the header
 * that was there (an old record's, or zeros) and ends the file there too.
 *
 * <p>Thread-safe: every method holds this object's monitor (appends come from Ratis's appending
 * thread, reads from its appenders, truncation from its log worker; each is short).
 */
final class EntryDataLog implements Closeable {
    static final String DIR = "entry-data";
    private static final String PREFIX = "data-";
    private static final String SPARE = "spare-";
    /** At most this many emptied files are kept for reuse (in memory: each holds a segment's pages). */
    static final int MOST_SPARES = 16;
    private static final int MAGIC = 0x50494544; // "PIED"
    private static final int RECORD_HEADER = 20;
    /** A segment is closed and a new one started once it holds this many bytes. */
    private final long segmentBytes;
    private final Path dir;
    private final List<Segment> segments = new ArrayList<>();
    private boolean closed;
    /** The buffer records are put together in, kept between appends up to {@link #KEPT_BUFFER} bytes. */
    private ByteBuffer buffer;
    private static final int KEPT_BUFFER = 4 << 20;
    /** A file was created since the directory was last forced. */
    private boolean newFiles;
    /** Whether emptied files are kept for reuse: the directory is in memory. */
    private final boolean reuse;
    /** Emptied files, mapped, for new segments to take (only where {@link #reuse}). */
    private final ArrayDeque<Segment> spares = new ArrayDeque<>();
    private long sparesMade;
    private long sparesTaken;
    /**
     * Maps a new spare's pages in, on a daemon thread of its own: a store into a page not yet in a
     * mapping faults, once per page, on the appending thread; touching the pages ahead maps them in
     * sixteen at a time, off that path. Only reads: appends may store into the mapping meanwhile.
     */
    private static final java.util.concurrent.Executor PREFAULT = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "pistore-entry-data-prefault");
        t.setDaemon(true);
        return t;
    });

    /** One file: its records' indexes and offsets, in order. */
    private static final class Segment {
        final Path path;
        final FileChannel channel;
        long[] indexes = new long[64];
        long[] offsets = new long[64];
        int count;
        long end; // bytes of whole records
        boolean unforced;
        /** The file's first bytes mapped (a segment's worth), or null: positional writes only. */
        MappedByteBuffer map;

        Segment(Path path, FileChannel channel) {
            this.path = path;
            this.channel = channel;
        }

        void add(long index, long offset) {
            if (count == indexes.length) {
                indexes = Arrays.copyOf(indexes, count * 2);
                offsets = Arrays.copyOf(offsets, count * 2);
            }
            indexes[count] = index;
            offsets[count++] = offset;
        }

        long first() {
            return indexes[0];
        }

        long last() {
            return indexes[count - 1];
        }
    }

    private EntryDataLog(Path dir, long segmentBytes, boolean reuse) {
        this.dir = dir;
        this.segmentBytes = segmentBytes;
        this.reuse = reuse && segmentBytes <= Integer.MAX_VALUE;
    }

    /** Opens (creating it if needed) the directory's log, dropping a torn tail. */
    static EntryDataLog open(Path dir, long segmentBytes) throws IOException {
        PrivateFiles.createDirectories(dir);
        return open(dir, segmentBytes, io.pistore.engine.volume.file.FileVolume.inMemory(dir));
    }

    /** As above; {@code reuse}: emptied files are kept for new segments (tests choose). */
    static EntryDataLog open(Path dir, long segmentBytes, boolean reuse) throws IOException {
        PrivateFiles.createDirectories(dir);
        EntryDataLog log = new EntryDataLog(dir, segmentBytes, reuse);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, SPARE + "*")) {
            for (Path f : ds) {
                Files.delete(f); // kept by a run before for reuse: nothing in it counts
            }
        }
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, PREFIX + "*")) {
            ds.forEach(files::add);
        }
        files.sort((a, b) -> Long.compare(firstIndexOf(a), firstIndexOf(b)));
        boolean torn = false;
        for (Path f : files) {
            if (torn) {
                Files.delete(f); // after a torn record: nothing in it was ever durable before the log named it
                continue;
            }
            FileChannel c = PrivateFiles.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE);
            Segment s = new Segment(f, c);
            torn = scan(s, firstIndexOf(f));
            if (s.count == 0) {
                c.close();
                Files.delete(f);
            } else {
                log.segments.add(s);
            }
        }
        return log;
    }

    private static long firstIndexOf(Path p) {
        return Long.parseLong(p.getFileName().toString().substring(PREFIX.length()));
    }

    /** Reads a segment's records, truncating it at the first that does not hold; true if it did that. */
    private static boolean scan(Segment s, long named) throws IOException {
        long size = s.channel.size();
        long pos = 0;
        ByteBuffer h = ByteBuffer.allocate(RECORD_HEADER);
        long previous = named - 1; // the file's first record is of the entry it is named by
        while (pos + RECORD_HEADER <= size) {
            h.clear();
            readFully(s.channel, h, pos);
            h.flip();
            int magic = h.getInt();
            long index = h.getLong();
            int length = h.getInt();
            int crc = h.getInt();
            if (magic != MAGIC || length < 0 || pos + RECORD_HEADER + length > size || index <= previous) {
                break;
            }
            ByteBuffer data = ByteBuffer.allocate(length);
            readFully(s.channel, data, pos + RECORD_HEADER);
            data.flip();
            if (crcOf(data) != crc) {
                break;
            }
            s.add(index, pos);
            previous = index;
            pos += RECORD_HEADER + length;
        }
        s.end = pos;
        if (pos < size) {
            s.channel.truncate(pos);
            s.channel.force(false);
            return true;
        }
        return false;
    }

    private static void readFully(FileChannel c, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            int n = c.read(b, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file");
            }
            pos += n;
        }
    }

    static int crcOf(ByteBuffer b) {
        CRC32C c = new CRC32C();
        c.update(b.duplicate());
        return (int) c.getValue();
    }

    /** The CRC-32C of a string's bytes, taken from its pieces' own arrays (a read-only view would be copied first). */
    static int crcOf(ByteString s) {
        CRC32C c = new CRC32C();
        try {
            UnsafeByteOperations.unsafeWriteTo(s, new ByteOutput() {
                @Override
                public void write(byte value) {
                    c.update(value);
                }

                @Override
                public void write(byte[] value, int offset, int length) {
                    c.update(value, offset, length);
                }

                @Override
                public void writeLazy(byte[] value, int offset, int length) {
                    c.update(value, offset, length);
                }

                @Override
                public void write(ByteBuffer value) {
                    c.update(value);
                }

                @Override
                public void writeLazy(ByteBuffer value) {
                    c.update(value);
                }
            });
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // the output throws none
        }
        return (int) c.getValue();
    }

    /**
     * Appends the data of entry {@code index}, whose checksum must be {@code crc} (else nothing is
     * written); records at {@code index} or after go first (an entry replaced).
     */
    synchronized void append(long index, ByteString data, int crc) throws IOException {
        checkOpen();
        int actual = crcOf(data);
        if (actual != crc) {
            throw new IOException(String.format("the data of log entry %d fails its checksum (expected %08x,"
                    + " actual %08x)", index, crc, actual));
        }
        if (lastIndex() >= index) {
            truncate(index);
        }
        int want = RECORD_HEADER + data.size();
        Segment s = segments.isEmpty() ? null : segments.get(segments.size() - 1);
        boolean fresh = s == null || s.end >= segmentBytes;
        if (fresh && s != null && s.map != null && s.channel.size() > s.end) {
            // a reused file, full: its old records behind the new ones go, or an open would take
            // them for a torn tail and drop every file after it (its mapping ends before s.end)
            s.channel.truncate(s.end);
        }
        if (fresh) {
            Path f = dir.resolve(PREFIX + index); // a file left by a failed append is started again
            s = takeSpare(f);
            if (s == null) {
                s = new Segment(f, PrivateFiles.open(f, StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ, StandardOpenOption.WRITE));
            }
        }
        ByteBuffer header = ByteBuffer.allocate(RECORD_HEADER).putInt(MAGIC).putLong(index).putInt(data.size())
                .putInt(crc).flip();
        try {
            if (s.map != null && s.end + want <= s.map.capacity()) {
                // the bytes, then the header: cut short, the record keeps the header that was there
                data.copyTo(s.map.duplicate().limit((int) s.end + want).position((int) s.end + RECORD_HEADER));
                s.map.put((int) s.end, header, 0, RECORD_HEADER);
            } else {
                writePositional(s, header, data);
            }
        } catch (IOException e) {
            if (fresh) {
                s.channel.close();
            }
            throw e;
        }
        if (fresh) {
            segments.add(s);
            newFiles = true;
        }
        s.add(index, s.end);
        s.end += want;
        s.unforced = true;
    }

    /**
     * Writes a record at the end of {@code s} from one contiguous direct buffer: a file channel copies
     * each heap piece of a rope into a temporary direct buffer of its own, and the kernel then copies
     * many small pieces.
     */
    private void writePositional(Segment s, ByteBuffer header, ByteString data) throws IOException {
        int want = RECORD_HEADER + data.size();
        ByteBuffer b = buffer;
        if (b == null || b.capacity() < want) {
            b = ByteBuffer.allocateDirect(Math.max(want, 64 << 10));
        }
        b.clear();
        b.put(header);
        data.copyTo(b);
        b.flip();
        buffer = b.capacity() <= KEPT_BUFFER ? b : null;
        while (b.hasRemaining()) {
            s.channel.write(b, s.end + b.position());
        }
    }

    /**
     * A spare file renamed to {@code f}, its first record's header zeroed, or null where none is
     * kept (or the rename failed: that spare is then deleted).
     */
    private Segment takeSpare(Path f) throws IOException {
        Segment spare = spares.poll();
        if (spare == null) {
            return null;
        }
        try {
            Files.move(spare.path, f);
        } catch (IOException e) {
            spare.channel.close();
            Files.deleteIfExists(spare.path);
            return null;
        }
        spare.map.put(0, new byte[RECORD_HEADER]);
        sparesTaken++;
        Segment s = new Segment(f, spare.channel);
        s.map = spare.map;
        return s;
    }

    /**
     * Drops a file whose records are all dropped: where files are reused, a full one is kept as a
     * spare (its pages [0, segment) were all written, so a store into its mapping allocates nothing
     * and never meets a hole); otherwise deleted.
     */
    private void retire(Segment s) throws IOException {
        if (reuse && s.end >= segmentBytes && spares.size() < MOST_SPARES) {
            try {
                MappedByteBuffer m = s.map != null ? s.map : s.channel.map(FileChannel.MapMode.READ_WRITE, 0, segmentBytes);
                Path p = dir.resolve(SPARE + sparesMade++);
                Files.move(s.path, p);
                Segment spare = new Segment(p, s.channel);
                spare.map = m;
                spares.add(spare);
                if (s.map == null) {
                    PREFAULT.execute(() -> { // its pages into the mapping ahead of the appends that take it
                        try {
                            m.load();
                        } catch (InternalError e) {
                            // the file was cut short under the mapping (a restart's open): nothing to map in
                        }
                    });
                }
                return;
            } catch (IOException e) {
                // not kept: deleted below
            }
        }
        s.channel.close();
        Files.delete(s.path);
    }

    /** Makes every record appended so far durable. */
    synchronized void force() throws IOException {
        checkOpen();
        for (Segment s : segments) {
            if (s.unforced) {
                s.channel.force(false);
                s.unforced = false;
            }
        }
        if (newFiles) {
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
            newFiles = false;
        }
    }

    /** The data of entry {@code index}, or null where this log has no record of it. */
    synchronized ByteString read(long index) throws IOException {
        checkOpen();
        for (int i = segments.size() - 1; i >= 0; i--) {
            Segment s = segments.get(i);
            if (s.first() <= index) {
                int k = Arrays.binarySearch(s.indexes, 0, s.count, index);
                if (k < 0) {
                    return null;
                }
                ByteBuffer h = ByteBuffer.allocate(RECORD_HEADER);
                readFully(s.channel, h, s.offsets[k]);
                h.flip().position(12);
                int length = h.getInt();
                int crc = h.getInt();
                ByteBuffer data = ByteBuffer.allocate(length);
                readFully(s.channel, data, s.offsets[k] + RECORD_HEADER);
                data.flip();
                if (crcOf(data) != crc) {
                    throw new IOException("the data of log entry " + index + " in " + s.path
                            + " fails its checksum");
                }
                return UnsafeByteOperations.unsafeWrap(data);
            }
        }
        return null;
    }

    /** Drops the records of entries {@code index} and after. */
    synchronized void truncate(long index) throws IOException {
        checkOpen();
        while (!segments.isEmpty()) {
            Segment s = segments.get(segments.size() - 1);
            if (s.first() >= index) {
                s.channel.close();
                Files.delete(s.path);
                segments.remove(segments.size() - 1);
                continue;
            }
            int k = Arrays.binarySearch(s.indexes, 0, s.count, index);
            int keep = k >= 0 ? k : -k - 1;
            if (keep < s.count) {
                s.end = s.offsets[keep];
                s.count = keep;
                if (s.map == null) {
                    s.channel.truncate(s.end);
                } else { // a mapped file keeps its length (a store past its end faults): zeros end the records
                    ByteBuffer zeros = ByteBuffer.allocate(RECORD_HEADER);
                    while (zeros.hasRemaining()) {
                        s.channel.write(zeros, s.end + zeros.position());
                    }
                }
                s.unforced = true;
            }
            return;
        }
    }

    /** Deletes the files whose every record is of an entry before {@code index}. */
    synchronized void dropBefore(long index) throws IOException {
        checkOpen();
        // the last segment is kept: appends continue in it
        while (segments.size() > 1 && segments.get(0).last() < index) {
            retire(segments.remove(0));
        }
    }

    /** The newest entry with a record here, or -1. */
    synchronized long lastIndex() {
        return segments.isEmpty() ? -1 : segments.get(segments.size() - 1).last();
    }

    /** The oldest entry with a record here, or -1. */
    synchronized long firstIndex() {
        return segments.isEmpty() ? -1 : segments.get(0).first();
    }

    /** Whether every record appended so far was forced. */
    synchronized boolean allForced() {
        return !newFiles && segments.stream().noneMatch(s -> s.unforced);
    }

    /** How many files hold records. */
    synchronized int files() {
        return segments.size();
    }

    /** How many emptied files are kept for reuse. */
    synchronized int spares() {
        return spares.size();
    }

    /** How many times a new segment took a spare file since open. */
    synchronized long sparesTaken() {
        return sparesTaken;
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("the entry data log in " + dir + " is closed");
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException first = null;
        for (Segment s : segments) {
            try {
                s.channel.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        segments.clear();
        for (Segment s : spares) {
            try {
                s.channel.close();
                Files.deleteIfExists(s.path);
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        spares.clear();
        if (first != null) {
            throw first;
        }
    }
}
