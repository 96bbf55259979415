package io.pistore.replication.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.raft.ReadReply;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.replication.raft.StoredBlockCheck;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * The heal and scrub paths of a {@link ReplicatedVolume}: a block that fails its check on the replica
 * read is read from the other replicas, at least as fresh, and the first copy that passes is returned
 * and written back through the log as a repair entry, which only replicas whose copy fails apply (so a
 * block written again meanwhile is never rolled back); a scrub checks every block on every replica
 * the same way. A block bad on every replica is reported, never "repaired" with wrong data.
 */
final class ReplicaRepair {
    /** What the repairs need of their volume, as it is now (its members and clients change). */
    interface Group {
        RaftGroup members();

        /** The group's client for linearizable reads (not the writes' one). */
        RaftClient readClient();

        /** The client that reads one chosen replica. */
        RaftClient replicaReader();

        /** The leader this peer knows, or null. */
        RaftPeerId knownLeader();

        /** Puts a command through the log and returns once it is committed and applied. */
        void commit(Message m, String what) throws IOException;
    }

    private final String name;
    private final BlockFormat format;
    /** The volume's block count now (it may grow). */
    private final java.util.function.LongSupplier blocks;
    private final long timeoutMs;
    private final long attemptMs;
    private final Consumer<String> log;
    private final Group group;
    private final AtomicLong healedBlocks = new AtomicLong();
    private final AtomicLong unhealableBlocks = new AtomicLong();

    ReplicaRepair(String name, BlockFormat format, java.util.function.LongSupplier blocks, long timeoutMs, long attemptMs, Consumer<String> log,
            Group group) {
        this.name = name;
        this.format = format;
        this.blocks = blocks;
        this.timeoutMs = timeoutMs;
        this.attemptMs = attemptMs;
        this.log = log;
        this.group = group;
    }

    /** Blocks that failed their check on the replica read first and were served from a good replica. */
    long healedBlocks() {
        return healedBlocks.get();
    }

    /** Blocks that failed their check on every replica asked. */
    long unhealableBlocks() {
        return unhealableBlocks.get();
    }

    /**
     * Checks blocks read from {@code replica} (as fresh as {@code appliedIndex}), heals the ones that
     * fail from the other replicas, and leaves the result in {@code data}/{@code metadata} (which may
     * be the same lists as {@code d}/{@code m}; {@code metadata} may be null).
     */
    void checkAndHeal(long lba, int n, ScatterList d, ScatterList m, RaftPeerId replica, long appliedIndex,
            ScatterList data, ScatterList metadata) {
        // Nearly every read passes: one pass that stops at the first failure and allocates nothing for
        // the answer; the failing blocks are listed only when there is one.
        Map<Integer, PiError> bad = StoredBlockCheck.allPass(format, lba, d, m, n) ? Map.of()
                : StoredBlockCheck.badStoredBlocks(format, lba, d, m, n);
        if (!bad.isEmpty()) {
            byte[] dc = new byte[n * format.dataSize()];
            byte[] mc = new byte[n * format.metadataSize()];
            d.read(0, dc, 0, dc.length);
            m.read(0, mc, 0, mc.length);
            for (Map.Entry<Integer, PiError> b : bad.entrySet()) {
                heal(lba + b.getKey(), b.getValue(), replica, appliedIndex, dc, b.getKey() * format.dataSize(), mc,
                        b.getKey() * format.metadataSize());
            }
            d = ScatterList.wrap(dc);
            m = ScatterList.wrap(mc);
        }
        if (d != data) {
            copy(d, data);
        }
        if (metadata != null && m != metadata) {
            copy(m, metadata);
        }
    }

    /**
     * Block {@code lba} failed on {@code badReplica}: asks the others for it, at least as fresh as
     * {@code minIndex}; the first copy that passes goes into {@code data}/{@code meta} at the offsets
     * and is written back through the log as a repair.
     */
    private void heal(long lba, PiError error, RaftPeerId badReplica, long minIndex, byte[] data, int dataOff,
            byte[] meta, int metaOff) {
        String where = "volume " + name + " lba=" + lba + " replica " + badReplica + " error=" + error.kind().shortName();
        for (RaftPeer p : group.members().getPeers()) {
            if (p.getId().equals(badReplica)) {
                continue;
            }
            ReadReply copy;
            try {
                copy = GroupRead.fromReplica(group.replicaReader(), p.getId(), lba, 1, minIndex, "volume " + name, timeoutMs);
            } catch (IOException e) {
                log.accept(where + ": replica " + p.getId() + " could not be read: " + e.getMessage());
                continue;
            }
            ScatterList d = ScatterList.of(copy.data);
            ScatterList m = ScatterList.of(copy.metadata);
            if (!StoredBlockCheck.badStoredBlocks(format, lba, d, m, 1).isEmpty()) {
                log.accept(where + ": replica " + p.getId() + " has a bad copy too");
                continue;
            }
            d.read(0, data, dataOff, format.dataSize());
            m.read(0, meta, metaOff, format.metadataSize());
            healedBlocks.incrementAndGet();
            try {
                group.commit(ReplicaCommand.carrying(ReplicaCommand.Op.REPAIR, lba, 1, d, m, true), "repair lba=" + lba);
                log.accept(where + ": read from replica " + p.getId() + ", bad copy rewritten");
            } catch (IOException e) {
                log.accept(where + ": read from replica " + p.getId() + ", rewrite failed: " + e.getMessage());
            }
            return;
        }
        unhealableBlocks.incrementAndGet();
        log.accept(where + ": no replica has a good copy");
    }

    /**
     * Checks every block on every replica, as a replica can check it, and repairs what it can: a
     * block failing on some replicas gets a repair entry carrying a good replica's copy, which every
     * replica whose copy fails applies; a block failing on every replica is reported. Each chunk is
     * read from every replica at least as fresh as a linearizable read of it. {@code progress} hears
     * the blocks done after each chunk.
     */
    ReplicaScrubReport scrub(java.util.function.LongConsumer progress) throws IOException {
        ReplicaScrubReport report = new ReplicaScrubReport();
        int per = Math.max(1, (1 << 20) / format.dataSize());
        long count = blocks.getAsLong();
        for (long lba = 0; lba < count; lba += per) {
            int n = (int) Math.min(per, count - lba);
            RaftClientReply fresh = GroupRead.linearizable(group.readClient(), group.members().getPeers(), group::knownLeader,
                    ReplicaCommand.plain(ReplicaCommand.Op.READ, lba, 1, false), "volume " + name + ": read lba=" + lba,
                    System.nanoTime(), timeoutMs, attemptMs);
            long minIndex = ReadReply.decode(fresh.getMessage().getContent()).appliedIndex;
            Map<RaftPeerId, ReadReply> copies = new java.util.LinkedHashMap<>();
            Map<RaftPeerId, Map<Integer, PiError>> bad = new java.util.HashMap<>();
            java.util.TreeSet<Integer> failing = new java.util.TreeSet<>();
            for (RaftPeer p : group.members().getPeers()) {
                try {
                    ReadReply r = GroupRead.fromReplica(group.replicaReader(), p.getId(), lba, n, minIndex, "volume " + name, timeoutMs);
                    copies.put(p.getId(), r);
                    Map<Integer, PiError> b = StoredBlockCheck.badStoredBlocks(format, lba, ScatterList.of(r.data),
                            ScatterList.of(r.metadata), n);
                    bad.put(p.getId(), b);
                    failing.addAll(b.keySet());
                    if (!b.isEmpty()) {
                        report.badCopies.merge(p.getId().toString(), (long) b.size(), Long::sum);
                    }
                } catch (IOException e) {
                    report.unreachable.putIfAbsent(p.getId().toString(), e.getMessage());
                }
            }
            for (int i : failing) {
                scrubRepair(report, lba + i, i, copies, bad);
            }
            report.blocks += n;
            progress.accept(report.blocks);
        }
        return report;
    }

    private void scrubRepair(ReplicaScrubReport report, long lba, int i, Map<RaftPeerId, ReadReply> copies,
            Map<RaftPeerId, Map<Integer, PiError>> bad) {
        RaftPeerId source = null;
        for (RaftPeerId p : copies.keySet()) {
            if (!bad.get(p).containsKey(i)) {
                source = p;
                break;
            }
        }
        java.util.List<String> where = new java.util.ArrayList<>();
        for (Map.Entry<RaftPeerId, Map<Integer, PiError>> e : bad.entrySet()) {
            PiError err = e.getValue().get(i);
            if (err != null) {
                where.add("replica " + e.getKey() + " error=" + err.kind().shortName());
            }
        }
        String what = "volume " + name + " lba=" + lba + " " + String.join(", ", where);
        if (source == null) {
            report.unrepairable.add(lba);
            unhealableBlocks.incrementAndGet();
            log.accept(what + ": no replica has a good copy (scrub)");
            return;
        }
        ReadReply good = copies.get(source);
        ScatterList d = ScatterList.of(good.data).slice((long) i * format.dataSize(), format.dataSize());
        ScatterList m = ScatterList.of(good.metadata).slice((long) i * format.metadataSize(), format.metadataSize());
        try {
            group.commit(ReplicaCommand.carrying(ReplicaCommand.Op.REPAIR, lba, 1, d, m, true), "repair lba=" + lba);
            report.repairedCopies += where.size();
            log.accept(what + ": rewritten from replica " + source + " (scrub)");
        } catch (IOException e) {
            log.accept(what + ": rewrite from replica " + source + " failed: " + e.getMessage());
        }
    }

    private static void copy(ScatterList from, ScatterList to) {
        byte[] chunk = new byte[(int) Math.min(1 << 16, Math.max(1, from.length()))];
        for (long off = 0; off < from.length(); off += chunk.length) {
            int len = (int) Math.min(chunk.length, from.length() - off);
            from.read(off, chunk, 0, len);
            to.write(off, chunk, 0, len);
        }
    }
}
