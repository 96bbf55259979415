package io.pistore.server.metrics;

import io.pistore.engine.volume.CacheFigures;
import io.pistore.engine.volume.JournalFigures;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * One per-volume figure of a volume's storage (its journal or its block cache) as a Prometheus
 * metric: name, help, counter or gauge, and how to read it from the figures the store reports. The
 * tables {@link #JOURNAL}, {@link #CACHE} and {@link #SCRUB} list them, so adding one is one line.
 */
record StorageMetric<T>(String name, String help, boolean gauge, ToDoubleFunction<T> value) {
    static final List<StorageMetric<JournalFigures>> JOURNAL = List.of(
            counter("pistore_journal_records", "Records appended to the journal since the volume was opened",
                    JournalFigures::recordsAppended),
            counter("pistore_journal_bytes",
                    "Bytes of journal records (headers, data, metadata) appended since the volume was opened",
                    JournalFigures::bytesAppended),
            counter("pistore_journal_checkpoints", "Checkpoints that applied journal records to the home files",
                    JournalFigures::checkpoints),
            counter("pistore_journal_checkpoint_seconds",
                    "Time spent in those checkpoints, forcing the journal and the home files included",
                    j -> j.checkpointNanos() / 1e9),
            gauge("pistore_journal_replayed_records",
                    "Journal records replayed when the volume was opened (0 after a clean close)",
                    JournalFigures::replayedOnOpen),
            gauge("pistore_journal_fill_bytes",
                    "Bytes of the journal ring from the oldest record not yet forced to the home files to the newest",
                    JournalFigures::fillBytes),
            gauge("pistore_journal_capacity_bytes",
                    "Size of the journal ring; writers wait for a checkpoint when the fill reaches it",
                    JournalFigures::capacityBytes),
            gauge("pistore_journal_failed",
                    "1 while the volume's writes fail after a home write or checkpoint failed (no space, say), until a heal",
                    j -> j.failed() ? 1 : 0),
            counter("pistore_journal_heals",
                    "Failures cleared by writing the journal home again once the file system took writes",
                    JournalFigures::heals));

    static final List<StorageMetric<CacheFigures>> CACHE = List.of(
            counter("pistore_cache_hits", "Blocks a read found in the block cache", CacheFigures::hits),
            counter("pistore_cache_misses",
                    "Blocks a read did not find in the block cache (read from the volume, then cached)",
                    CacheFigures::misses),
            counter("pistore_cache_evictions", "Blocks dropped from the block cache to keep it within its size",
                    CacheFigures::evictions),
            gauge("pistore_cache_blocks", "Blocks the cache holds now (an estimate)", CacheFigures::blocks),
            gauge("pistore_cache_bytes", "Bytes the cache holds now, with its per-block overhead",
                    CacheFigures::bytes),
            gauge("pistore_cache_capacity_bytes", "The most the cache holds (--cache)", CacheFigures::capacityBytes));

    static final List<StorageMetric<io.pistore.server.scrub.PeriodicScrub.Figures>> SCRUB = List.of(
            counter("pistore_scrub_passes", "Background scrub passes completed over the volume (serve --scrub-every)",
                    io.pistore.server.scrub.PeriodicScrub.Figures::passes),
            gauge("pistore_scrub_bad_blocks", "Blocks whose stored PI failed its check in the last completed pass",
                    io.pistore.server.scrub.PeriodicScrub.Figures::badBlocks),
            gauge("pistore_scrub_checked_blocks", "Blocks the last completed pass read and checked",
                    io.pistore.server.scrub.PeriodicScrub.Figures::checkedBlocks),
            gauge("pistore_scrub_completed_seconds", "When the last pass over the volume ended (Unix time)",
                    io.pistore.server.scrub.PeriodicScrub.Figures::completedEpochSeconds));

    private static <T> StorageMetric<T> counter(String name, String help, ToDoubleFunction<T> value) {
        return new StorageMetric<>(name, help, false, value);
    }

    private static <T> StorageMetric<T> gauge(String name, String help, ToDoubleFunction<T> value) {
        return new StorageMetric<>(name, help, true, value);
    }

    /** This metric with one data point per row: the row's labels and the figures read from. */
    MetricSnapshot snapshot(List<Map.Entry<Labels, T>> rows) {
        if (gauge) {
            GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
            for (Map.Entry<Labels, T> r : rows) {
                b.dataPoint(GaugeDataPointSnapshot.builder().labels(r.getKey())
                        .value(value.applyAsDouble(r.getValue())).build());
            }
            return b.build();
        }
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        for (Map.Entry<Labels, T> r : rows) {
            b.dataPoint(CounterDataPointSnapshot.builder().labels(r.getKey())
                    .value(value.applyAsDouble(r.getValue())).build());
        }
        return b.build();
    }
}
