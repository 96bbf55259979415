package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The volume a {@link VolumeStore} hands out: it forwards to the volume's current storage and lets
 * the store change that storage under running I/O. {@link #pause()} stops new requests at the gate
 * and waits until those already inside have left; {@link #resume(Volume)} lets them on to new
 * storage (a resize reopens the files), and {@link #retire()} sends them away with
 * {@link VolumeGoneException} (a delete).
 *
 * <p>The fast path is two striped counter increments and a volatile read, with no lock: a request
 * counts itself in before it reads {@code paused}, and {@link #pause()} sets {@code paused} before
 * it reads the counts, so either the request sees the pause or the pause sees the request (both
 * are volatile, hence ordered). Thread-safe.
 */
final class GatedVolume implements Volume {
    private final String name;
    private final BlockFormat format;
    private final LongAdder entered = new LongAdder();
    private final LongAdder left = new LongAdder();
    private final Object gate = new Object();
    private volatile Volume current;
    private volatile boolean paused;
    private volatile boolean retired;

    GatedVolume(Volume storage) {
        this.name = storage.name();
        this.format = storage.format();
        this.current = storage;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BlockFormat format() {
        return format;
    }

    @Override
    public long blockCount() {
        return current.blockCount();
    }

    @Override
    public boolean waitsForPeers() {
        return current.waitsForPeers();
    }

    @Override
    public boolean flushReturnsAtOnce() {
        return current.flushReturnsAtOnce();
    }

    @Override
    public boolean readWaitsForPeers() {
        return current.readWaitsForPeers();
    }

    @Override
    public io.pistore.spi.PathState pathState() {
        return retired ? io.pistore.spi.PathState.INACCESSIBLE : current.pathState();
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup() {
        return retired ? null : current.pathGroup();
    }

    @Override
    public io.pistore.spi.SharedVolumeState sharedState() {
        return retired ? null : current.sharedState();
    }

    @Override
    public io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite() {
        return retired ? null : current.orderedCompareAndWrite();
    }

    @Override
    public void optimizePath(String replicaId) throws IOException {
        if (retired) {
            throw new VolumeGoneException(name);
        }
        current.optimizePath(replicaId);
    }

    @Override
    public void read(long lba, int blocks, ScatterList data, ScatterList metadata) throws IOException {
        Volume v = enter();
        try {
            v.read(lba, blocks, data, metadata);
        } finally {
            left.increment();
        }
    }

    @Override
    public void readMetadata(long lba, int blocks, ScatterList metadata) throws IOException {
        Volume v = enter();
        try {
            v.readMetadata(lba, blocks, metadata);
        } finally {
            left.increment();
        }
    }

    @Override
    public void read(long lba, int blocks, ScatterList data, ScatterList metadata, long receivedNanos) throws IOException {
        Volume v = enter();
        try {
            v.read(lba, blocks, data, metadata, receivedNanos);
        } finally {
            left.increment();
        }
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) throws IOException {
        write(lba, blocks, data, metadata, fua, io.pistore.spi.PiDuty.NONE);
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua,
            io.pistore.spi.PiDuty duty) throws IOException {
        Volume v = enter();
        try {
            v.write(lba, blocks, data, metadata, fua, duty);
        } finally {
            left.increment();
        }
    }

    @Override
    public boolean writesAsync() {
        return current.writesAsync();
    }

    /** The request stays counted inside until its write completes (a pause waits for it). */
    @Override
    public java.util.concurrent.CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data,
            ScatterList metadata, boolean fua) {
        return writeAsync(lba, blocks, data, metadata, fua, io.pistore.spi.PiDuty.NONE);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data,
            ScatterList metadata, boolean fua, io.pistore.spi.PiDuty duty) {
        return writeAsync(lba, blocks, data, metadata, fua, duty, null);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data,
            ScatterList metadata, boolean fua, io.pistore.spi.PiDuty duty, io.pistore.spi.WriteFence fence) {
        Volume v;
        try {
            v = enter();
        } catch (IOException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        java.util.concurrent.CompletableFuture<Void> f;
        try {
            f = v.writeAsync(lba, blocks, data, metadata, fua, duty, fence);
        } catch (RuntimeException e) {
            left.increment();
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        return f.whenComplete((x, t) -> left.increment());
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua) throws IOException {
        writeZeroes(lba, blocks, fua, null);
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua, io.pistore.spi.WriteFence fence) throws IOException {
        Volume v = enter();
        try {
            v.writeZeroes(lba, blocks, fua, fence);
        } finally {
            left.increment();
        }
    }

    @Override
    public void flush() throws IOException {
        Volume v = enter();
        try {
            v.flush();
        } finally {
            left.increment();
        }
    }

    /** Closes the storage (the store's close; no request may be inside). */
    @Override
    public void close() throws IOException {
        current.close();
    }

    /**
     * Requests that have entered so far, ever: a figure that moves while the volume is used (the
     * control path samples it to tell a volume in use from an idle one).
     */
    long requestsEntered() {
        return entered.sum();
    }

    /** Requests inside the volume now (a moment's view). */
    long inFlight() {
        long out = left.sum(); // first: the difference can only be too large, never too small
        return entered.sum() - out;
    }

    /** The storage now (for the store's own work while paused). */
    Volume storage() {
        return current;
    }

    /**
     * Stops new requests at the gate and waits until none is inside. Each pause is ended by
     * {@link #resume} or {@link #retire}.
     */
    void pause() throws InterruptedException {
        paused = true;
        while (inFlight() > 0) {
            Thread.sleep(1);
        }
    }

    /** Lets requests through again, on {@code storage} from now on. */
    void resume(Volume storage) {
        synchronized (gate) {
            current = storage;
            paused = false;
            gate.notifyAll();
        }
    }

    /** Sends every waiting and later request away: the volume is gone. */
    void retire() {
        synchronized (gate) {
            retired = true;
            paused = false;
            gate.notifyAll();
        }
    }

    private Volume enter() throws IOException {
        entered.increment();
        if (paused || retired) {
            return enterSlow();
        }
        return current;
    }

    private Volume enterSlow() throws IOException {
        left.increment(); // not inside while it waits: the pause must be able to finish
        synchronized (gate) {
            while (paused && !retired) {
                try {
                    gate.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while volume " + name + " was paused");
                }
            }
            if (retired) {
                throw new VolumeGoneException(name);
            }
            entered.increment();
            return current;
        }
    }
}
