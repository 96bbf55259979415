package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PathState;
import io.pistore.spi.PiDuty;
import io.pistore.spi.WriteFence;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A volume that hands every call to another, for a wrapper that changes or watches a few of them (a
 * subclass overrides only those). Every method is forwarded, the interface's defaults included, so
 * the wrapped volume's own answers (its waits for peers, its asynchronous writes) stay as they are.
 */
public abstract class ForwardingVolume implements Volume {
    private final Volume delegate;

    protected ForwardingVolume(Volume delegate) {
        this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
    }

    /** The volume every call goes to. */
    protected final Volume delegate() {
        return delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public BlockFormat format() {
        return delegate.format();
    }

    @Override
    public long blockCount() {
        return delegate.blockCount();
    }

    @Override
    public void read(long lba, int blocks, ScatterList data, ScatterList metadata) throws IOException {
        delegate.read(lba, blocks, data, metadata);
    }

    @Override
    public void readMetadata(long lba, int blocks, ScatterList metadata) throws IOException {
        delegate.readMetadata(lba, blocks, metadata);
    }

    @Override
    public void read(long lba, int blocks, ScatterList data, ScatterList metadata, long receivedNanos)
            throws IOException {
        delegate.read(lba, blocks, data, metadata, receivedNanos);
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) throws IOException {
        delegate.write(lba, blocks, data, metadata, fua);
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua, PiDuty duty)
            throws IOException {
        delegate.write(lba, blocks, data, metadata, fua, duty);
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua) throws IOException {
        delegate.writeZeroes(lba, blocks, fua);
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua, WriteFence fence) throws IOException {
        delegate.writeZeroes(lba, blocks, fua, fence);
    }

    @Override
    public void flush() throws IOException {
        delegate.flush();
    }

    @Override
    public boolean waitsForPeers() {
        return delegate.waitsForPeers();
    }

    @Override
    public boolean flushReturnsAtOnce() {
        return delegate.flushReturnsAtOnce();
    }

    @Override
    public boolean readWaitsForPeers() {
        return delegate.readWaitsForPeers();
    }

    @Override
    public PathState pathState() {
        return delegate.pathState();
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup() {
        return delegate.pathGroup();
    }

    @Override
    public io.pistore.spi.SharedVolumeState sharedState() {
        return delegate.sharedState();
    }

    @Override
    public io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite() {
        return delegate.orderedCompareAndWrite();
    }

    @Override
    public void optimizePath(String replicaId) throws IOException {
        delegate.optimizePath(replicaId);
    }

    @Override
    public boolean writesAsync() {
        return delegate.writesAsync();
    }

    @Override
    public CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data, ScatterList metadata,
            boolean fua) {
        return delegate.writeAsync(lba, blocks, data, metadata, fua);
    }

    @Override
    public CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data, ScatterList metadata,
            boolean fua, PiDuty duty) {
        return delegate.writeAsync(lba, blocks, data, metadata, fua, duty);
    }

    @Override
    public CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data, ScatterList metadata,
            boolean fua, PiDuty duty, WriteFence fence) {
        return delegate.writeAsync(lba, blocks, data, metadata, fua, duty, fence);
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
