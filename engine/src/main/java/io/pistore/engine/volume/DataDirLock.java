package io.pistore.engine.volume;

import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One owner per data directory: an exclusive OS lock on {@code DIR/.lock}, held from the open of a
 * directory {@link VolumeStore} to its close. The kernel drops the lock when the process ends, however
 * it ends, so a crash never leaves a stale lock; the file itself stays. While it holds the lock the
 * owner keeps its pid and what it is doing in the file ({@code pid=…}, {@code owner=…}), so that a
 * refused open can name it.
 *
 * <p>Within one JVM the lock file is opened at most once: a second open of the same directory is
 * refused from a table of this process's locks before any channel is opened, because closing any
 * channel of a file drops every lock the process holds on it (POSIX record locks), which would hand
 * the directory to the next process while the first store still writes.
 */
final class DataDirLock implements AutoCloseable {
    static final String FILE = ".lock";

    /** The directories this JVM owns (real paths), with the owner each was opened for. */
    private static final Map<Path, Owner> HELD = new ConcurrentHashMap<>();

    private record Owner(long pid, String what) {
    }

    private final Path key;
    private final Owner self;
    private final FileChannel channel;
    private final FileLock lock;
    private boolean closed;

    private DataDirLock(Path key, Owner self, FileChannel channel, FileLock lock) {
        this.key = key;
        this.self = self;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock of existing directory {@code dir} for {@code owner} (one line saying what this
     * process does with it), or throws {@link DataDirInUseException} naming the process that has it.
     */
    static DataDirLock acquire(Path dir, String owner) throws IOException {
        Path key = dir.toRealPath();
        Owner self = new Owner(ProcessHandle.current().pid(), oneLine(owner));
        Owner prior = HELD.putIfAbsent(key, self);
        if (prior != null) {
            throw new DataDirInUseException(dir, prior.pid(), prior.what(), true);
        }
        FileChannel channel = null;
        try {
            Path file = key.resolve(FILE);
            channel = PrivateFiles.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                // Locked in this JVM by code other than a VolumeStore; nothing here knows the owner.
                throw new DataDirInUseException(dir, -1, null, true);
            }
            if (lock == null) {
                channel.close();
                channel = null;
                Owner other = readOwner(file);
                throw other == null ? new DataDirInUseException(dir, -1, null, false)
                        : new DataDirInUseException(dir, other.pid(), other.what(), false);
            }
            writeOwner(channel, self);
            return new DataDirLock(key, self, channel, lock);
        } catch (IOException | RuntimeException | Error e) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            HELD.remove(key, self);
            throw e;
        }
    }

    /** Releases the lock (the file stays). Idempotent. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            lock.release();
        } finally {
            try {
                channel.close();
            } finally {
                // Only now may this JVM open the file again: the channel that held the lock is closed.
                HELD.remove(key, self);
            }
        }
    }

    /**
     * The owner line as one positional write over the old content, then a truncate: a reader sees
     * the old owner or the new one, never an empty file in between.
     */
    private static void writeOwner(FileChannel c, Owner o) throws IOException {
        byte[] b = ("pid=" + o.pid() + "\nowner=" + o.what() + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.wrap(b);
        long at = 0;
        while (buf.hasRemaining()) {
            at += c.write(buf, at);
        }
        c.truncate(b.length);
    }

    /**
     * The owner a lock file names, or null when it names none, or a process that is gone (the
     * content a crashed owner left, read before the new owner rewrote it).
     */
    private static Owner readOwner(Path file) {
        Properties p = new Properties();
        try {
            p.load(new StringReader(Files.readString(file, StandardCharsets.UTF_8)));
        } catch (IOException | IllegalArgumentException e) {
            return null; // gone or unreadable: the refusal then names no owner
        }
        long pid;
        try {
            pid = Long.parseLong(p.getProperty("pid", "").trim());
        } catch (NumberFormatException e) {
            return null;
        }
        if (pid <= 0 || ProcessHandle.of(pid).isEmpty()) {
            return null;
        }
        String what = p.getProperty("owner", "").trim();
        return new Owner(pid, what.isEmpty() ? null : what);
    }

    private static String oneLine(String s) {
        String t = s == null ? "" : s.strip().replaceAll("\\s+", " ");
        return t.isEmpty() ? VolumeStore.DEFAULT_OWNER : t;
    }
}
