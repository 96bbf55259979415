package io.pistore.replication;

import io.pistore.spi.TransportCapabilities;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import io.pistore.replication.rpc.PeerRpcType;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * Every Ratis setting pistore uses, in one place: the transport of the replication traffic (Ratis's
 * gRPC), election and request timeouts, linearizable reads, log sizes that fit the largest request,
 * snapshots and log purging. Immutable; the {@code with} methods return a copy.
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
    private final double snapshotEveryVolumes;
    private final int purgeGap;
    private final long segmentBytes;
    private final DataBeside dataBeside;
    /** Whether a snapshot's copy of the volume is made only when shipped; null: as the peers' RPC allows. */
    private final Boolean copyOnDemand;

    /**
     * Where a leader puts a command's data ({@code EntryData}): beside the Raft log, or inside its
     * entry. Beside saves the log's checksum and zero-filling of the data (CPU); on a disk it costs a
     * second forcing per entry (the data before its header), which at one write at a time costs
     * more than it saves.
     */
    public enum DataBeside {
        /** Beside where the leader's log is in memory (tmpfs, ramfs), inside on a disk. */
        AUTO,
        ALWAYS,
        NEVER;

        /** {@code auto}, {@code always} or {@code never} (the system property {@code pistore.replication.dataBeside}). */
        public static DataBeside parse(String s) {
            for (DataBeside d : values()) {
                if (d.name().equalsIgnoreCase(s.trim())) {
                    return d;
                }
            }
            throw new IllegalArgumentException("pistore.replication.dataBeside must be auto, always or never, not '"
                    + s + "'");
        }
    }
    /** At most this much in one batch entry of several commands (a larger command goes alone). */
    public static final long BATCH_BYTES = 4L << 20;
    /** At most this many commands in one batch entry. */
    public static final int BATCH_COMMANDS = 256;
    /**
     * The longest the next batch entry waits for the commands of writers just answered ({@link
     * CommitBatcher}); the system property {@code pistore.replication.linger.nanos} overrides it, 0
     * turning the wait off (for comparisons).
     */
    public static final long BATCH_LINGER_MAX_NANOS = Long.getLong("pistore.replication.linger.nanos",
            TimeUnit.MILLISECONDS.toNanos(2));

    private ReplicationSettings(Duration electionMin, Duration electionMax, Duration rpcTimeout,
            Duration operationTimeout, long snapshotEveryEntries, int entriesInFlight, Duration membershipTimeout,
            double snapshotEveryVolumes, int purgeGap, long segmentBytes, DataBeside dataBeside, Boolean copyOnDemand) {
        this.dataBeside = java.util.Objects.requireNonNull(dataBeside);
        this.copyOnDemand = copyOnDemand;
        if (snapshotEveryEntries < 1) {
            throw new IllegalArgumentException("snapshot interval must be at least 1 entry");
        }
        if (!(snapshotEveryVolumes >= 0) || Double.isInfinite(snapshotEveryVolumes)) {
            throw new IllegalArgumentException("snapshot data ratio must be a finite number ≥ 0");
        }
        if (purgeGap < 1) {
            throw new IllegalArgumentException("purge gap must be at least 1 entry");
        }
        if (segmentBytes != 0 && segmentBytes < (1 << 10)) {
            throw new IllegalArgumentException("log segments must be at least 1 KiB");
        }
        this.snapshotEveryVolumes = snapshotEveryVolumes;
        this.purgeGap = purgeGap;
        this.segmentBytes = segmentBytes;
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

    /** How far ahead a log segment is filled with zeros ({@code raft.server.log.preallocated.size}). */
    static final SizeInBytes PREALLOCATED = SizeInBytes.valueOf("64KB");

    /**
     * The fewest entries between two snapshots, and the purge gap: every snapshot can purge. A snapshot
     * is led by the data applied, not by entries: one of 128 KiB writes can hold 2 MiB, so a count of
     * entries alone kept GiBs of log.
     */
    private static final int MIN_ENTRIES_PER_SNAPSHOT = 64;

    /**
     * An election after 1-2 s without a leader; a request to one peer given up after 3 s; a read or
     * write that no quorum answered within 10 s fails; a membership change fails once its new replicas
     * made no progress for 120 s (it waits as long as they catch up). A snapshot (a copy of the whole volume) once
     * the entries applied since the last carry four times the volume's size (data and metadata), and
     * are at least 64 (so a copy costs a write at most a quarter of its bytes again); the log is
     * then purged up to it (the whole segments before it); commands' data beside the log where the
     * peer's Raft storage is in memory, inside it on a disk ({@link DataBeside#AUTO}); log segments of
     * 64 KiB where the log holds headers (each padded by its data's size, so a segment stands for at
     * most 64 MiB, kept until the segment is purged), 22 MiB where it holds the data (two of the
     * largest entries, the open segment's entries in memory); one log entry of a volume on its way
     * to a quorum at a time (the writes that arrive meanwhile leave together as the next one,
     * which waits up to 2 ms for the writers the one before answered). The system properties
     * {@code pistore.replication.election.ms} (the minimum election timeout, the maximum twice it),
     * {@code pistore.replication.rpc.ms} and {@code pistore.replication.operation.ms} override the
     * timeouts (tests of failures shorten them); {@code pistore.replication.entries.in.flight} the
     * entries of a volume on their way at once (for weighing it on more cores than two);
     * {@code pistore.replication.snapshot.volumes} the volumes' worth of entries between snapshots
     * (for weighing log length against copies).
     */
    public static ReplicationSettings defaults() {
        long election = Long.getLong("pistore.replication.election.ms", 1000);
        return new ReplicationSettings(Duration.ofMillis(election), Duration.ofMillis(2 * election),
                Duration.ofMillis(Long.getLong("pistore.replication.rpc.ms", 3000)),
                Duration.ofMillis(Long.getLong("pistore.replication.operation.ms", 10_000)), MIN_ENTRIES_PER_SNAPSHOT,
                Integer.getInteger("pistore.replication.entries.in.flight", 1),
                Duration.ofSeconds(120), snapshotVolumesProperty(),
                MIN_ENTRIES_PER_SNAPSHOT, 0,
                DataBeside.parse(System.getProperty("pistore.replication.dataBeside", "auto")), null);
    }

    private static double snapshotVolumesProperty() {
        String v = System.getProperty("pistore.replication.snapshot.volumes", "4");
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("pistore.replication.snapshot.volumes must be a number, not '" + v + "'");
        }
    }

    public ReplicationSettings withElectionTimeout(Duration min, Duration max) {
        return new ReplicationSettings(min, max, rpcTimeout, operationTimeout, snapshotEveryEntries, entriesInFlight,
                membershipTimeout, snapshotEveryVolumes,
                purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    public ReplicationSettings withRpcTimeout(Duration t) {
        return new ReplicationSettings(electionMin, electionMax, t, operationTimeout, snapshotEveryEntries, entriesInFlight,
                membershipTimeout, snapshotEveryVolumes,
                purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    public ReplicationSettings withOperationTimeout(Duration t) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, t, snapshotEveryEntries, entriesInFlight,
                membershipTimeout, snapshotEveryVolumes,
                purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    /**
     * A snapshot is considered once {@code n} entries were applied since the last (Ratis's trigger),
     * and taken once they also carry enough data ({@link #withSnapshotEveryVolumes}); Ratis asks again
     * after each entry applied until then.
     */
    public ReplicationSettings withSnapshotEveryEntries(long n) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, n, entriesInFlight,
                membershipTimeout, snapshotEveryVolumes,
                purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    /**
     * A snapshot is taken only once the entries applied since the last one carry {@code ratio} times
     * the volume's size (data and metadata) or more: a snapshot copies the whole volume, so it should
     * not come more often than its copy is worth; but the log up to it is kept until then, so disk
     * space for about that much log is needed. 0: every {@link #withSnapshotEveryEntries} entries.
     */
    public ReplicationSettings withSnapshotEveryVolumes(double ratio) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, membershipTimeout, ratio, purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    /**
     * Whether a snapshot copies the volume only when a follower needs it ({@code true}) or as it is
     * taken ({@code false}). On demand, a snapshot is a checkpoint and a few small files, and a
     * leader copies its volume only when a follower's log is gone (its appender keeps beating while
     * the copy runs). Unset, on demand over pistore's peer RPC, at once over gRPC, whose appender
     * would wait for the copy without a heartbeat.
     */
    public ReplicationSettings withSnapshotCopiedOnDemand(boolean onDemand) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, membershipTimeout, snapshotEveryVolumes, purgeGap, segmentBytes, dataBeside, onDemand);
    }

    /** Whether a snapshot's copy is made only when shipped ({@link #withSnapshotCopiedOnDemand}). */
    public boolean snapshotCopiedOnDemand() {
        return copyOnDemand != null ? copyOnDemand : peerRpc();
    }

    /** The fewest entries between two snapshots (Ratis's trigger; with the purge gap, each snapshot can purge). */
    public long snapshotEveryEntries() {
        return snapshotEveryEntries;
    }

    /** The bytes of entries after which a snapshot of a volume of {@code volumeBytes} is taken. */
    public long snapshotAfterBytes(long volumeBytes) {
        double b = snapshotEveryVolumes * volumeBytes;
        return b >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) b;
    }

    /**
     * The log is purged up to a new snapshot only when at least {@code entries} entries can go (Ratis
     * removes whole closed segments): fewer, larger purges.
     */
    public ReplicationSettings withPurgeGap(int entries) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, membershipTimeout, snapshotEveryVolumes, entries, segmentBytes, dataBeside, copyOnDemand);
    }

    /**
     * Log segments of at most {@code bytes} (an entry larger than that gets a segment of its own):
     * purging removes whole segments, so smaller ones free space sooner, at more files.
     */
    public ReplicationSettings withLogSegmentBytes(long bytes) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, membershipTimeout, snapshotEveryVolumes, purgeGap, bytes, dataBeside, copyOnDemand);
    }

    /**
     * At most {@code n} log entries of one volume on their way to a quorum at once; commands that
     * arrive meanwhile leave together as one entry ({@code CommitBatcher}). 1 makes the largest
     * batches, a large number (64, the target's requests in flight) one entry per command.
     */
    public ReplicationSettings withEntriesInFlight(int n) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries, n,
                membershipTimeout, snapshotEveryVolumes,
                purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    public int entriesInFlight() {
        return entriesInFlight;
    }

    /** Where a leader puts a command's data; see {@link DataBeside}. */
    public ReplicationSettings withDataBeside(DataBeside d) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, membershipTimeout, snapshotEveryVolumes, purgeGap, segmentBytes, d, copyOnDemand);
    }

    public DataBeside dataBeside() {
        return dataBeside;
    }

    /**
     * Log segments where the log holds headers only: a thousand of 4 KiB writes, or the headers of
     * 64 MiB of data at most (they are padded by their data), which is kept until they are purged.
     */
    private static final long BESIDE_SEGMENT = 64 << 10;

    /** The log segments' size where the log holds headers only, the data beside it. */
    public long besideSegmentBytes() {
        return segmentBytes > 0 ? segmentBytes : BESIDE_SEGMENT;
    }

    /** Whether a leader whose Raft storage is in {@code storage} puts a command's data beside the log. */
    public boolean dataBesideIn(Path storage) {
        if (dataBeside != DataBeside.AUTO) {
            return dataBeside == DataBeside.ALWAYS;
        }
        Path p = storage.toAbsolutePath();
        while (p != null && !java.nio.file.Files.exists(p)) {
            p = p.getParent();
        }
        return p != null && io.pistore.engine.volume.file.FileVolume.inMemory(p);
    }

    public ReplicationSettings withMembershipTimeout(Duration t) {
        return new ReplicationSettings(electionMin, electionMax, rpcTimeout, operationTimeout, snapshotEveryEntries,
                entriesInFlight, t, snapshotEveryVolumes,
                purgeGap, segmentBytes, dataBeside, copyOnDemand);
    }

    /**
     * How long a membership change may go without progress before it fails: a new replica first
     * catches up (from a snapshot of the whole volume and the log after it, or from the log while it
     * still holds every entry), then the joint configuration and the new one commit. A change that
     * adds a replica waits as long as that replica keeps receiving (a large volume takes longer to
     * copy than any fixed bound); one that only removes gets this long in all.
     */
    public Duration membershipTimeout() {
        return membershipTimeout;
    }

    /**
     * How long one request to one peer waits for its answer before it is sent again (a read beside it,
     * to another member; a write, with the same call id, to another member, which points it to the
     * leader): the election timeout's maximum plus the RPC timeout. A leader that died or froze is
     * replaced within the first; a live leader slow under load is given an RPC's time more before a
     * request leaves it (a read then answered by a follower with the read index; a write sent
     * again to the same entry through the retry cache).
     */
    public Duration attemptTimeout() {
        return electionMax.plus(rpcTimeout);
    }

    /** How long a peer goes without a leader before it asks whether a change left it out: three of the longest election timeouts. */
    public Duration noLeaderTimeout() {
        return electionMax.multipliedBy(3);
    }

    /** How long a read or write may wait for a quorum before it fails. */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    private static TimeDuration td(Duration d) {
        return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A peer's server: listening on {@code host:port} (0: any free port), its Raft storage in {@code storage}. */
    public RaftProperties server(String host, int port, Path storage) {
        RaftProperties p = common();
        GrpcConfigKeys.Server.setHost(p, host);
        GrpcConfigKeys.Server.setPort(p, port);
        PeerRpcType.listen(p, host, port);
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
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(dataBesideIn(storage) ? besideSegmentBytes()
                : segmentBytes > 0 ? segmentBytes : 2 * ENTRY_MAX.getSize()));
        // A segment is extended by zeros at most 64 KiB ahead (Ratis's default is 4 MiB): on a disk the
        // zeros reach it at the next forcing, before entries overwrite them, so a far preallocation
        // writes the log twice; an entry larger than that is preallocated exactly, and one write at a
        // time still finds its room filled (no size change to commit at each forcing).
        RaftServerConfigKeys.Log.setPreallocatedSize(p, PREALLOCATED);
        // No commit-index records in the log: Ratis appends one to every peer's log each time the
        // commit index moves, which took half the log's entries under writes (each one more append,
        // flush and apply round on every peer). A restarted peer learns the commit index from its
        // leader instead, and the state machine skips entries already in its files (skipUpTo).
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, ENTRY_MAX);
        // An appender sends a new entry to its follower at once. Ratis's default holds it until 1 ms
        // has passed since the last append or heartbeat to that follower, so that entries gather:
        // the group commit (CommitBatcher) gathers them already, with one entry of a volume in flight,
        // and the next entry usually comes within that millisecond of the last append, so waiting held
        // back nearly every entry.
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, TimeDuration.ZERO);
        // No closed segment kept in memory beyond what a follower or the state machine still needs
        // (Ratis keeps six): entries carry the data, and each one held for seconds outlives the
        // young generation, is copied into the old one and dies there, which cost the peers more
        // CPU in the garbage collector than any one step of a write, and pauses of a tenth of a second
        // and more. A follower that lags further is sent entries read back from the segment files.
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 0);
        // A command's data travels with its entry but is kept by the state machine beside the log
        // (EntryData): Ratis's log and its cache hold the header, and Ratis asks the state machine for
        // the data when it sends an entry. The data is durable before Ratis writes the header.
        RaftServerConfigKeys.Log.StateMachineData.setCachingEnabled(p, true);
        RaftServerConfigKeys.Log.StateMachineData.setSync(p, true);
        // Snapshots are copies of the volume (VolumeSnapshots); the log is purged up to each, even
        // while a follower still lacks some of it: that follower gets the snapshot's files shipped by
        // the leader (in chunks, over the peers' RPC) and continues from the log after it.
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, purgeGap);
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, true);
        RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(p, SizeInBytes.valueOf(4 << 20));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, snapshotEveryEntries);
        // Offered at a clean stop too; taken then only if enough data was applied since the last.
        RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 1); // each is a whole volume
        // Told after three of the longest election timeouts without a leader: a peer removed while it
        // was down then asks the members it knew whether a change left it out (the leader's answer to
        // its election says so, but can lose the race against two other members' refusals).
        RaftServerConfigKeys.Notification.setNoLeaderTimeout(p, td(noLeaderTimeout()));
        return withRatisOverrides(p, System.getProperties());
    }

    /**
     * The gRPC server's parameters: the calls that carry the write path ({@link
     * ReplicationRpcExecutors}) are handled on the connection's event loop rather than handed to
     * gRPC's executor threads.
     */
    public Parameters serverParameters() {
        Parameters ps = new Parameters();
        GrpcConfigKeys.Server.setServicesCustomizer(ps,
                (builder, types) -> builder.callExecutor(new ReplicationRpcExecutors()));
        return ps;
    }

    /** A client of a group: one request to one peer is given up after the RPC timeout and retried elsewhere. */
    public RaftProperties client() {
        RaftProperties p = common();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, td(rpcTimeout));
        return withRatisOverrides(p, System.getProperties());
    }

    /**
     * A client whose one request may take longer than an RPC: a configuration change waits for the new
     * replica's catch-up and both configurations to commit (a retry after a timeout would find the
     * change in progress); a peer told to leave its group closes it and deletes its files first.
     */
    public RaftProperties client(Duration requestTimeout) {
        RaftProperties p = common();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, td(requestTimeout));
        return withRatisOverrides(p, System.getProperties());
    }

    /**
     * pistore's own RPC by default, gRPC as the option; never Ratis's netty RPC: its server answers a
     * client request, and a leader's append, on the connection's I/O thread and blocks it until the
     * entry is committed (or the follower's log is forced), so one client's writes would be committed
     * one at a time. The other two take both asynchronously, so many writes in flight share each log fsync.
     */
    private static RaftProperties common() {
        RaftProperties p = new RaftProperties();
        if (peerRpc()) {
            RaftConfigKeys.Rpc.setType(p, PeerRpcType.INSTANCE);
        } else {
            RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        }
        GrpcConfigKeys.setMessageSizeMax(p, MESSAGE_MAX);
        return p;
    }

    /** The prefix of JVM system properties handed to Ratis as they are, without it ({@link #withRatisOverrides}). */
    public static final String RATIS_PROPERTY_PREFIX = "pistore.ratis.";
    /**
     * Whether the peers talk over pistore's own RPC ({@link PeerRpcType}, the default) rather than
     * Ratis's gRPC ({@code -Dpistore.replication.rpc=grpc}); every peer and client of a group must
     * agree. Read each time a server or client is made; any other value is refused, naming both.
     */
    static boolean peerRpc() {
        String v = System.getProperty(PEER_RPC_PROPERTY, "pistore");
        if (!v.equals("pistore") && !v.equals("grpc")) {
            throw new IllegalArgumentException(PEER_RPC_PROPERTY + " is pistore (the default) or grpc, not '" + v + "'");
        }
        return v.equals("pistore");
    }

    /** The system property that chooses the peers' RPC: {@code pistore} (the default) or {@code grpc}. */
    public static final String PEER_RPC_PROPERTY = "pistore.replication.rpc";

    /**
     * {@code p} with every JVM system property {@code pistore.ratis.KEY=VALUE} set as Ratis's {@code KEY}
     * over pistore's own value: for weighing a Ratis setting without a new build
     * ({@code -Dpistore.ratis.raft.server.log.appender.wait-time.min=0ms}). Ratis ignores a key it does
     * not know; a value it cannot parse fails the peer's start with Ratis's message.
     */
    static RaftProperties withRatisOverrides(RaftProperties p, java.util.Properties system) {
        for (String name : system.stringPropertyNames()) {
            if (name.startsWith(RATIS_PROPERTY_PREFIX) && name.length() > RATIS_PROPERTY_PREFIX.length()) {
                p.set(name.substring(RATIS_PROPERTY_PREFIX.length()), system.getProperty(name));
            }
        }
        return p;
    }

    @Override
    public String toString() {
        return "election " + electionMin.toMillis() + "-" + electionMax.toMillis() + " ms, rpc " + rpcTimeout.toMillis()
                + " ms, operation " + operationTimeout.toMillis() + " ms, snapshot every " + snapshotEveryEntries + " entries, "
                + " with " + snapshotEveryVolumes + "x the volume's size of data, purge gap " + purgeGap + " entries, log segments "
                + (segmentBytes > 0 ? segmentBytes + " bytes, " : "by where the data goes, ") + entriesInFlight + " entries in flight, membership change "
                + membershipTimeout.toMillis() + " ms, data beside the log " + dataBeside.name().toLowerCase()
                + ", snapshots copied " + (copyOnDemand == null ? "as the RPC allows" : copyOnDemand ? "on demand" : "at once");
    }
}
