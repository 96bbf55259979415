package io.pistore.engine.volume;

/**
 * What a file volume's journal did since the volume was opened (a resize reopens it, so the
 * figures start again), and how full it is now.
 *
 * @param recordsAppended requests (writes, zeroings) appended as records
 * @param bytesAppended   bytes of those records: headers, data and metadata
 * @param checkpoints     checkpoints that applied records to the home files (a full segment's, or
 *                        every record at once when the journal had to be emptied); on a volume that
 *                        writes through (tmpfs), the moves to the next segment, which apply nothing
 * @param checkpointNanos time those checkpoints took, forcing the journal and the home files included
 * @param replayedOnOpen  records replayed when the volume was opened (0 after a clean close)
 * @param fillBytes       bytes of the ring from the oldest record not yet forced to the home files to the newest
 *                        (the unused ends of full segments included)
 * @param capacityBytes   the ring's size: the segments it cycles through together (two of them on a
 *                        volume that writes through)
 * @param failed          whether writes fail now: a home write or checkpoint failed and no heal
 *                        has cleared it yet (docs/FORMAT.md#checkpoints)
 * @param heals           heals since open: failures cleared by writing the journal home again
 */
public record JournalFigures(long recordsAppended, long bytesAppended, long checkpoints, long checkpointNanos,
                             long replayedOnOpen, long fillBytes, long capacityBytes, boolean failed, long heals) {
}
