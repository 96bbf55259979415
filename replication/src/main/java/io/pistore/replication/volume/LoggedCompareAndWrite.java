package io.pistore.replication.volume;

import io.pistore.replication.rpc.CoarseTimeouts;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.raft.ApplyOutcome;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.replication.raft.StoredBlockCheck;
import io.pistore.spi.OrderedCompareAndWrite;
import io.pistore.spi.WriteFence;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;

/**
 * A replicated volume's COMPARE AND WRITE: one log command ({@link ReplicaCommand.Op#COMPARE_AND_WRITE})
 * that each replica compares and writes as it applies it, so it is atomic against the writes sent
 * through every peer, not only this one's. It goes as a write's entry does: into this peer's own log
 * while it leads, else (or after a step-down) through the group's client. Each is numbered in this
 * peer's own write stream ({@link OwnWrites}, the sender's view kept), so a second copy in the log (the
 * first left in a leader's log that stepped down and committed by the next, or put in again by the
 * client's retry to a new leader that had not yet applied it) is not compared and applied again, which
 * would answer a difference for a write that happened: it answers what the first did.
 */
final class LoggedCompareAndWrite implements OrderedCompareAndWrite {
    private final String name;
    private final BlockFormat format;
    private final long timeoutMs;
    /** Puts one log entry to the group (the volume's own path for entries), completing with its reply. */
    private final Function<Message, CompletableFuture<RaftClientReply>> entries;
    private final OwnWrites own;

    LoggedCompareAndWrite(String name, BlockFormat format, long timeoutMs, OwnWrites own,
            Function<Message, CompletableFuture<RaftClientReply>> entries) {
        this.name = name;
        this.format = format;
        this.timeoutMs = timeoutMs;
        this.own = own;
        this.entries = entries;
    }

    /**
     * With {@code verifyMetadata}, the command's metadata is the written blocks', then the metadata to
     * compare, then the mask ({@link ReplicaCommand.Op#COMPARE_AND_WRITE}).
     */
    @Override
    public CompletableFuture<Long> compareAndWrite(long lba, int blocks, byte[] verify, byte[] verifyMetadata, byte[] mask,
            ScatterList data, ScatterList metadata, boolean fua, WriteFence fence) {
        String what = "volume " + name + ": compare and write lba=" + lba + " blocks=" + blocks;
        int dl = blocks * format.dataSize();
        if (blocks < 1 || verify.length != dl || data.length() != dl) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(what + ": " + verify.length + " bytes to compare and "
                    + data.length() + " to write, not " + dl));
        }
        int ms = format.metadataSize();
        if (verifyMetadata != null && (ms == 0 || metadata == null || verifyMetadata.length != blocks * ms || mask.length != ms)) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(what + ": metadata to compare needs "
                    + blocks + " entries of " + ms + " bytes and a mask of one"));
        }
        PiError e = StoredBlockCheck.firstWriteError(format, lba, data, metadata, blocks);
        if (e != null) {
            return CompletableFuture.failedFuture(ApplyOutcome.refusedWrite(what, lba + e.blockIndex(), e));
        }
        // the command's data: the blocks to compare, then the blocks to write (copied once, into the command)
        java.nio.ByteBuffer[] both = new java.nio.ByteBuffer[1 + data.segmentCount()];
        both[0] = java.nio.ByteBuffer.wrap(verify);
        for (int i = 0; i < data.segmentCount(); i++) {
            both[1 + i] = data.segment(i);
        }
        WriteFence n = own.numbered(null);
        ScatterList meta = metadata;
        if (verifyMetadata != null) {
            java.util.List<java.nio.ByteBuffer> m3 = new java.util.ArrayList<>();
            for (int i = 0; i < metadata.segmentCount(); i++) {
                m3.add(metadata.segment(i));
            }
            m3.add(java.nio.ByteBuffer.wrap(verifyMetadata));
            m3.add(java.nio.ByteBuffer.wrap(mask));
            meta = ScatterList.of(m3);
        }
        Message m = ReplicaCommand.carrying(ReplicaCommand.Op.COMPARE_AND_WRITE, lba, blocks, ScatterList.of(both), meta,
                fua, new WriteFence(n.key(), n.epoch(), n.seq(), fence == null ? 0 : fence.view()));
        return CoarseTimeouts.shared().within(entries.apply(m), timeoutMs).handle((r, t) -> {
            Throwable c = t != null ? ReplicationException.unwrap(t) : r.isSuccess() ? null : r.getException();
            if (c != null) {
                throw new CompletionException(new ReplicationException(what + (c instanceof TimeoutException
                        ? " not committed by a quorum within " + timeoutMs + " ms" : " failed: " + ReplicationException.oneLine(c))));
            }
            ApplyOutcome o = ApplyOutcome.decode(r.getMessage().getContent());
            if (o.miscompareOffset() >= 0) {
                return o.miscompareOffset();
            }
            if (!o.isDone()) {
                throw new CompletionException(o.failure(what + " " + o.describe()));
            }
            return WRITTEN;
        });
    }
}
