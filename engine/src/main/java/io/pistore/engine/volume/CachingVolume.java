package io.pistore.engine.volume;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A read cache of hot blocks with their metadata (Caffeine, bounded by bytes) in front of another
 * volume. Writes go through to the volume first and then replace the cached copies, so the cache
 * never holds anything the volume does not. Striped read-write locks order a read that fills the
 * cache after a miss against a write of the same block, so a stale copy can never be put back.
 *
 * <p>A cache hit replaces a positional read from the page cache (a system call and a copy) with a
 * hash lookup and a copy (docs/BENCHMARKS.md#block-cache-and-local-queue).
 */
public final class CachingVolume implements Volume {
    private final Volume inner;
    private final BlockFormat format;
    private final Cache<Long, byte[]> cache;
    private final long maxBytes;
    private final BlockLocks locks = new BlockLocks();

    public CachingVolume(Volume inner, long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("cache size must be positive");
        }
        this.inner = inner;
        this.format = inner.format();
        this.maxBytes = maxBytes;
        // recordStats: Caffeine's striped counters, one increment per block looked up (for the metrics)
        this.cache = Caffeine.newBuilder().maximumWeight(maxBytes)
                .weigher((Long k, byte[] v) -> v.length + 64).recordStats().build();
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public BlockFormat format() {
        return format;
    }

    @Override
    public long blockCount() {
        return inner.blockCount();
    }

    /** Blocks held now (an estimate). */
    public long estimatedSize() {
        return cache.estimatedSize();
    }

    /** The volume behind the cache. */
    Volume inner() {
        return inner;
    }

    /** Hits, misses and evictions since open; blocks and bytes held now. */
    public CacheFigures figures() {
        // the cache settles its size and evictions in batches; settle them now (once per scrape)
        cache.cleanUp();
        com.github.benmanes.caffeine.cache.stats.CacheStats s = cache.stats();
        long bytes = cache.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
        return new CacheFigures(s.hitCount(), s.missCount(), s.evictionCount(), cache.estimatedSize(), bytes, maxBytes);
    }

    @Override
    public void read(long lba, int blocks, ScatterList data, ScatterList metadata) throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        long token = locks.lock(lba, blocks, false);
        try {
            MemoryVolume.Cursor d = new MemoryVolume.Cursor(data);
            MemoryVolume.Cursor m = metadata == null ? null : new MemoryVolume.Cursor(metadata);
            for (int i = 0; i < blocks; i++) {
                long b = lba + i;
                byte[] block = cache.getIfPresent(b);
                if (block == null) {
                    block = new byte[ds + ms];
                    inner.read(b, 1, ScatterList.of(ByteBuffer.wrap(block, 0, ds)),
                            ms == 0 ? null : ScatterList.of(ByteBuffer.wrap(block, ds, ms)));
                    cache.put(b, block);
                }
                d.put(block, 0, ds);
                if (m != null) {
                    m.put(block, ds, ms);
                }
            }
        } finally {
            locks.unlock(token, false);
        }
    }

    /** The inner volume's metadata, under this cache's locks: every write reaches it before they are let go. */
    @Override
    public void readMetadata(long lba, int blocks, ScatterList metadata) throws IOException {
        long token = locks.lock(lba, blocks, false);
        try {
            inner.readMetadata(lba, blocks, metadata);
        } finally {
            locks.unlock(token, false);
        }
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) throws IOException {
        write(lba, blocks, data, metadata, fua, io.pistore.spi.PiDuty.NONE);
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua,
            io.pistore.spi.PiDuty duty) throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        long token = locks.lock(lba, blocks, true);
        try {
            inner.write(lba, blocks, data, metadata, fua, duty);
            MemoryVolume.Cursor d = new MemoryVolume.Cursor(data);
            MemoryVolume.Cursor m = metadata == null ? null : new MemoryVolume.Cursor(metadata);
            for (int i = 0; i < blocks; i++) {
                byte[] block = new byte[ds + ms];
                d.get(block, 0, ds);
                if (m != null) {
                    m.get(block, ds, ms);
                }
                cache.put(lba + i, block);
            }
        } finally {
            locks.unlock(token, true);
        }
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua) throws IOException {
        long token = locks.lock(lba, blocks, true);
        try {
            inner.writeZeroes(lba, blocks, fua);
            for (int i = 0; i < blocks; i++) {
                cache.invalidate(lba + i);
            }
        } finally {
            locks.unlock(token, true);
        }
    }

    @Override
    public void flush() throws IOException {
        inner.flush();
    }

    @Override
    public void close() throws IOException {
        cache.invalidateAll();
        inner.close();
    }
}
