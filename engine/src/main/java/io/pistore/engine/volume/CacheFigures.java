package io.pistore.engine.volume;

/**
 * What a volume's block cache ({@link CachingVolume}) did since the volume was opened, and what it
 * holds now. Hits and misses count blocks, not requests: a read of 8 blocks looks up 8.
 *
 * @param hits          blocks a read found in the cache
 * @param misses        blocks a read did not find (read from the volume and then cached)
 * @param evictions     blocks dropped to keep the cache within its size
 * @param blocks        blocks held now (an estimate, as the cache keeps it)
 * @param bytes         bytes held now, with the cache's per-block overhead
 * @param capacityBytes the most it holds
 */
public record CacheFigures(long hits, long misses, long evictions, long blocks, long bytes, long capacityBytes) {
}
