package io.pistore.replication;

import io.pistore.spi.TransportCapabilities;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * Every Ratis setting pistore uses, in one place: the transport of the replication traffic (Ratis's
 * gRPC), election and request timeouts, linearizable reads, log sizes that fit the largest request,
 * log retention and snapshots. Immutable; the {@code with} methods return a copy.
 */
public final class ReplicationSettings {
    /**
     * A log entry carries at most one request: its data, its metadata (at most a quarter of the data,
     * 128 bytes per 512) and a small header; the margin covers Ratis's own framing.
     */
    private static final SizeInBytes ENTRY_MAX = SizeInBytes.valueOf(
            TransportCapabilities.MAX_TRANSFER_BYTES + TransportCapabilities.MAX_TRANSFER_BYTES / 4 + (1 << 20));
    /** A gRPC message carries at most one appender batch (or one request) and its framing. */
    private static final SizeInBytes MESSAGE_MAX = SizeInBytes.valueOf(2 * ENTRY_MAX.getSize());
    /** Ratis wants the log's write buffer larger than the appender's batch limit by a frame header. */
    private static final SizeInBytes WRITE_BUFFER = SizeInBytes.valueOf(ENTRY_MAX.getSize() + (64 << 10));

    private final Duration electionMin;
    private final Duration electionMax;
    private final Duration rpcTimeout;
    private final Duration operationTimeout;
    private final long snapshotEveryEntries;
    private final int entriesInFlight;
    private final Duration membershipTimeout;
    /** At most this much in one batch entry of several commands (a larger command goes alone). */
    static final long BATCH_BYTES = 4L << 20;
    /** At most this many commands in one batch entry. */
    static final int BATCH_COMMANDS = 256;

    private ReplicationSettings(Duration electionMin, Duration electionMax, Duration rpcTimeout,
            Duration operationTimeout, long snapshotEveryEntries, int entriesInFlight, Duration membershipTimeout) {
        if (entriesInFlight < 1) {
            throw new IllegalArgumentException("entries in flight must be at least 1");
        }
        this.entriesInFlight = entriesInFlight;
        if (electionMin.isNegative() || electionMin.isZero() || electionMax.compareTo(electionMin) < 0) {
            throw new IllegalArgumentException("election timeout must be positive, its maximum at least its minimum");
        }
        this.electionMin = electionMin;
        this.electionMax = electionMax;
        this.rpcTimeout = rpcTimeout;
        this.operationTimeout = operationTimeout;
        this.snapshotEveryEntries = snapshotEveryEntries;
        this.membershipTimeout = membershipTimeout;
    }

    /**
     * An election after 1-2 s without a leader; a request to one peer given up after 3 s; a read or
     * write that no quorum answered within 10 s fails; a snapshot every 10 000 entries; a membership
     * change (a new replica's catch-up included) that is not committed within 120 s fails.
     */
    public static ReplicationSettings defaults() {
        return new ReplicationSettings(Duration.ofMillis(1000), Duration.ofMillis(2000), Duration.ofSeconds(3),
                Duration.ofSeconds(10), 10_000, 2, Duration.ofSeconds(120));
    }

    public ReplicationSettings withElectionTimeout(Duration min, Duration max) {
        return new ReplicationSettings(min, max, rpcTimeout, operationTimeout, snapshotEveryEntries, entriesInFlight,
                membershipTimeout);
    }

    public ReplicationSettings withRpcTimeout(Duration t) {
        return new ReplicationSettings(electionMin, electionMax, t, operationTimeout, snapshotEveryEntries, entriesInFlight,
                membershipTimeout);
    }

    public ReplicationSettings withOperationTimeout(Duration t) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, t, snapshotEveryEntries, entriesInFlight,
                membershipTimeout);
    }

    public ReplicationSettings withSnapshotEveryEntries(long n) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, n, entriesInFlight,
                membershipTimeout);
    }

    /**
     * At most {@code n} log entries of one volume on their way to a quorum at once; commands that
     * arrive meanwhile leave together as one entry ({@link CommitBatcher}). 1 makes the largest
     * batches, a large number (64, the target's requests in flight) one entry per command.
     */
    public ReplicationSettings withEntriesInFlight(int n) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries, n,
                membershipTimeout);
    }

    int entriesInFlight() {
        return entriesInFlight;
    }

    public ReplicationSettings withMembershipTimeout(Duration t) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, t);
    }

    /**
     * How long a membership change may take before it fails: a new replica first catches up from the
     * log (all of it: the log is retained), then the joint configuration and the new one commit.
     */
    public Duration membershipTimeout() {
        return membershipTimeout;
    }

    /** How long a read or write may wait for a quorum before it fails. */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    private static TimeDuration td(Duration d) {
        return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A peer's server: listening on {@code host:port} (0: any free port), its Raft storage in {@code storage}. */
    RaftProperties server(String host, int port, Path storage) {
        RaftProperties p = common();
        GrpcConfigKeys.Server.setHost(p, host);
        GrpcConfigKeys.Server.setPort(p, port);
        RaftServerConfigKeys.setStorageDir(p, List.of(storage.toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, td(electionMin));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, td(electionMax));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, td(electionMin));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, td(electionMax));
        RaftServerConfigKeys.Rpc.setRequestTimeout(p, td(rpcTimeout));
        // A leader that has not heard from a majority within the election timeout steps down, so a
        // cut-off leader stops answering (and reads cannot be served by a stale one).
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p, td(electionMax));
        // Reads from the leader are linearizable: the read index, confirmed by a quorum's heartbeats
        // or, while it holds, the leader's lease.
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setLeaderLeaseEnabled(p, true);
        RaftServerConfigKeys.Read.setTimeout(p, td(operationTimeout));
        // Entries carry whole requests: every buffer that holds one must fit the largest.
        RaftServerConfigKeys.Log.setWriteBufferSize(p, WRITE_BUFFER);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(8 * ENTRY_MAX.getSize()));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, ENTRY_MAX);
        // Closed segments kept in memory for followers that lag: two, not Ratis's six (entries carry data).
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
        // Log retention: the log is never purged, so a lagging follower always catches up from it
        // (the snapshot is a marker over the volume's files, which are not shipped).
        RaftServerConfigKeys.Log.setPurgeGap(p, Integer.MAX_VALUE);
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, snapshotEveryEntries);
        RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, true); // a clean stop restarts without replay
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        return p;
    }

    /** A client of a group: one request to one peer is given up after the RPC timeout and retried elsewhere. */
    RaftProperties client() {
        RaftProperties p = common();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, td(rpcTimeout));
        return p;
    }

    /**
     * A client whose one request may take longer than an RPC: a configuration change waits for the new
     * replica's catch-up and both configurations to commit (a retry after a timeout would find the
     * change in progress); a peer told to leave its group closes it and deletes its files first.
     */
    RaftProperties client(Duration requestTimeout) {
        RaftProperties p = common();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, td(requestTimeout));
        return p;
    }

    /**
     * gRPC, not netty: Ratis's netty server answers a client request, and a leader's append, on the
     * connection's I/O thread and blocks it until the entry is committed (or the follower's log is
     * forced), so one client's writes would be committed one at a time. The gRPC server takes both
     * asynchronously, so many writes in flight share each log fsync.
     */
    private static RaftProperties common() {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        GrpcConfigKeys.setMessageSizeMax(p, MESSAGE_MAX);
        return p;
    }

    @Override
    public String toString() {
        return "election " + electionMin.toMillis() + "-" + electionMax.toMillis() + " ms, rpc " + rpcTimeout.toMillis()
                + " ms, operation " + operationTimeout.toMillis() + " ms, snapshot every " + snapshotEveryEntries + " entries, "
                + entriesInFlight + " entries in flight, membership change " + membershipTimeout.toMillis() + " ms";
    }
}
