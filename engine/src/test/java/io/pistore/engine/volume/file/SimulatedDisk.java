package io.pistore.engine.volume.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Files in memory behind {@link StorageFile}, with every write and sync recorded, so that a test can
 * build the states a crash at any point could leave on a disk (as CrashMonkey and ALICE do): what was
 * synced survives; of the writes since a file's last sync, any subset reaches the disk, in any order,
 * each possibly torn at 512-byte sector boundaries. A process crash (kill -9) is the case where all
 * of them do, and the write in progress when it came (the one at the crash point) may be there in
 * part. A disk made {@code inMemory} stands for tmpfs: its files say {@link StorageFile#inMemory},
 * and every crash of it is a process crash (a power loss leaves no file to open). Truncation counts
 * as durable at once (volumes truncate only while being created).
 */
final class SimulatedDisk {
    static final int SECTOR = 512;

    /** One recorded operation: a write of {@code bytes} at {@code pos}, or a sync ({@code bytes} null). */
    record Op(String file, long pos, byte[] bytes, long truncate) {
        boolean isSync() {
            return bytes == null && truncate < 0;
        }

        boolean isTruncate() {
            return truncate >= 0;
        }
    }

    private final Map<String, byte[]> initial;
    private final Map<String, Content> files = new HashMap<>();
    private final List<Op> ops = new ArrayList<>();
    /** What its files say of {@link StorageFile#syncIsCheap}: true stands for tmpfs (FileVolume then writes through). */
    private final boolean inMemory;

    /** A disk whose files start as {@code initial} (all durable). */
    SimulatedDisk(Map<String, byte[]> initial) {
        this(initial, false);
    }

    /** As above, in memory (tmpfs) or not. */
    SimulatedDisk(Map<String, byte[]> initial, boolean inMemory) {
        this.inMemory = inMemory;
        this.initial = new HashMap<>();
        for (Map.Entry<String, byte[]> e : initial.entrySet()) {
            this.initial.put(e.getKey(), e.getValue().clone());
            files.put(e.getKey(), new Content(e.getValue().clone()));
        }
    }

    SimulatedDisk() {
        this(Map.of());
    }

    /** An empty disk, in memory (tmpfs) or not. */
    SimulatedDisk(boolean inMemory) {
        this(Map.of(), inMemory);
    }

    /** A disk of this one's kind whose files start as {@code state} (a crash state of it, say). */
    SimulatedDisk like(Map<String, byte[]> state) {
        return new SimulatedDisk(state, inMemory);
    }

    /** The operations recorded so far, oldest first. */
    List<Op> ops() {
        return Collections.unmodifiableList(ops);
    }

    /** How many operations were recorded: crash points are 0 to this. */
    int opCount() {
        return ops.size();
    }

    /** The current contents of every file, as a process that stops now (and its page cache) sees them. */
    Map<String, byte[]> contents() {
        Map<String, byte[]> m = new HashMap<>();
        files.forEach((k, v) -> m.put(k, Arrays.copyOf(v.bytes, v.size)));
        return m;
    }

    /** A handle on a file, created empty if it does not exist. */
    StorageFile open(String name) {
        Content c = files.computeIfAbsent(name, k -> {
            initial.putIfAbsent(k, new byte[0]);
            return new Content(new byte[0]);
        });
        return new Handle(name, c);
    }

    /**
     * A state the disk could hold after a crash just before operation {@code crashAt} completed:
     * synced writes kept; of each file's later writes, a random subset (all of them with
     * {@code processCrash}), in random order, some torn at sector boundaries. After a process crash,
     * half the time, some sectors of the write at {@code crashAt} are there too (it was in progress).
     * On a disk in memory every crash is a process crash.
     */
    Map<String, byte[]> crashState(int crashAt, boolean processCrash, Random r) {
        processCrash |= inMemory;
        Op inProgress = processCrash && crashAt < ops.size() && r.nextBoolean() ? ops.get(crashAt) : null;
        Map<String, byte[]> out = new HashMap<>();
        for (Map.Entry<String, byte[]> e : initial.entrySet()) {
            String name = e.getKey();
            int lastSync = -1;
            for (int i = 0; i < crashAt; i++) {
                Op op = ops.get(i);
                if (op.file().equals(name) && op.isSync()) {
                    lastSync = i;
                }
            }
            Content c = new Content(e.getValue().clone());
            List<Op> pending = new ArrayList<>();
            for (int i = 0; i < crashAt; i++) {
                Op op = ops.get(i);
                if (!op.file().equals(name) || op.isSync()) {
                    continue;
                }
                if (i < lastSync || op.isTruncate()) {
                    c.apply(op);
                } else {
                    pending.add(op);
                }
            }
            if (processCrash) {
                pending.forEach(c::apply);
                if (inProgress != null && inProgress.file().equals(name) && inProgress.bytes() != null) {
                    applyTorn(c, inProgress, r);
                }
            } else {
                double keep = r.nextDouble();
                double tear = r.nextDouble() * 0.5;
                if (r.nextBoolean()) {
                    Collections.shuffle(pending, r);
                }
                for (Op op : pending) {
                    if (r.nextDouble() >= keep) {
                        continue;
                    }
                    if (r.nextDouble() < tear) {
                        applyTorn(c, op, r);
                    } else {
                        c.apply(op);
                    }
                }
            }
            out.put(name, Arrays.copyOf(c.bytes, c.size));
        }
        return out;
    }

    /** Applies a random subset of the sectors {@code op} touches. */
    private static void applyTorn(Content c, Op op, Random r) {
        long start = op.pos();
        long end = start + op.bytes().length;
        for (long s = start; s < end; ) {
            long next = Math.min(end, (s / SECTOR + 1) * SECTOR);
            if (r.nextBoolean()) {
                c.write(op.bytes(), (int) (s - start), (int) (next - s), s);
            }
            s = next;
        }
    }

    /** A file's bytes, shared by its handles. */
    private static final class Content {
        byte[] bytes;
        int size;

        Content(byte[] b) {
            bytes = b;
            size = b.length;
        }

        void apply(Op op) {
            if (op.isTruncate()) {
                truncate(op.truncate());
            } else {
                write(op.bytes(), 0, op.bytes().length, op.pos());
            }
        }

        void write(byte[] src, int off, int len, long pos) {
            int end = (int) (pos + len);
            if (end > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(end, bytes.length * 2));
            }
            System.arraycopy(src, off, bytes, (int) pos, len);
            size = Math.max(size, end);
        }

        void truncate(long n) {
            if (n < size) {
                Arrays.fill(bytes, (int) n, size, (byte) 0);
                size = (int) n;
            }
        }
    }

    private final class Handle implements StorageFile {
        private final String name;
        private final Content c;
        private boolean closed;

        Handle(String name, Content c) {
            this.name = name;
            this.c = c;
        }

        private void check() throws IOException {
            if (closed) {
                throw new ClosedChannelException();
            }
        }

        @Override
        public int read(ByteBuffer dst, long pos) throws IOException {
            check();
            if (pos >= c.size) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), c.size - pos);
            dst.put(c.bytes, (int) pos, n);
            return n;
        }

        @Override
        public void write(ByteBuffer src, long pos) throws IOException {
            check();
            byte[] b = new byte[src.remaining()];
            src.get(b);
            Op op = new Op(name, pos, b, -1);
            ops.add(op);
            c.apply(op);
        }

        @Override
        public void sync() throws IOException {
            check();
            ops.add(new Op(name, 0, null, -1));
        }

        @Override
        public long size() throws IOException {
            check();
            return c.size;
        }

        @Override
        public void truncate(long size) throws IOException {
            check();
            Op op = new Op(name, 0, null, size);
            ops.add(op);
            c.apply(op);
        }

        @Override
        public ByteBuffer mapReadOnly(long pos, long len) {
            return null;
        }

        @Override
        public boolean inMemory() {
            return inMemory;
        }

        @Override
        public ByteBuffer mapReadWrite(long pos, long len) {
            return null; // the volume then writes with write(), so every write is recorded
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
