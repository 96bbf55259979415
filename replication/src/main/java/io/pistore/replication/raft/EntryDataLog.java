package io.pistore.replication.raft;

import io.pistore.engine.volume.PrivateFiles;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * <p>Thread-safe: every method holds this object's monitor (appends come from Ratis's appending
 * thread, reads from its appenders, truncation from its log worker; each is short).
 */
final class EntryDataLog implements Closeable {
    static final String DIR = "entry-data";
    private static final String PREFIX = "data-";
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

    /** One file: its records' indexes and offsets, in order. */
    private static final class Segment {
        final Path path;
        final FileChannel channel;
        long[] indexes = new long[64];
        long[] offsets = new long[64];
        int count;
        long end; // bytes of whole records
        boolean unforced;

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

    private EntryDataLog(Path dir, long segmentBytes) {
        this.dir = dir;
        this.segmentBytes = segmentBytes;
    }

    /** Opens (creating it if needed) the directory's log, dropping a torn tail. */
    static EntryDataLog open(Path dir, long segmentBytes) throws IOException {
        PrivateFiles.createDirectories(dir);
        EntryDataLog log = new EntryDataLog(dir, segmentBytes);
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
            torn = scan(s);
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
    private static boolean scan(Segment s) throws IOException {
        long size = s.channel.size();
        long pos = 0;
        ByteBuffer h = ByteBuffer.allocate(RECORD_HEADER);
        long previous = Long.MIN_VALUE;
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
        // One contiguous direct buffer per record: a file channel copies each heap piece of a rope
        // into a temporary direct buffer of its own, and the kernel then copies many small pieces.
        int want = RECORD_HEADER + data.size();
        ByteBuffer b = buffer;
        if (b == null || b.capacity() < want) {
            b = ByteBuffer.allocateDirect(Math.max(want, 64 << 10));
        }
        b.clear().position(RECORD_HEADER);
        data.copyTo(b);
        b.flip().position(RECORD_HEADER);
        int actual = crcOf(b);
        if (actual != crc) {
            throw new IOException(String.format("the data of log entry %d fails its checksum (expected %08x,"
                    + " actual %08x)", index, crc, actual));
        }
        b.position(0);
        b.putInt(MAGIC).putLong(index).putInt(data.size()).putInt(crc).position(0);
        buffer = b.capacity() <= KEPT_BUFFER ? b : null;
        if (lastIndex() >= index) {
            truncate(index);
        }
        Segment s = segments.isEmpty() ? null : segments.get(segments.size() - 1);
        boolean fresh = s == null || s.end >= segmentBytes;
        if (fresh) {
            Path f = dir.resolve(PREFIX + index); // a file left by a failed append is started again
            s = new Segment(f, PrivateFiles.open(f, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.READ, StandardOpenOption.WRITE));
        }
        try {
            while (b.hasRemaining()) {
                s.channel.write(b, s.end + b.position());
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
                s.channel.truncate(s.end);
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
            Segment s = segments.remove(0);
            s.channel.close();
            Files.delete(s.path);
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
        if (first != null) {
            throw first;
        }
    }
}
