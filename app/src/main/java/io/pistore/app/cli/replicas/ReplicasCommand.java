package io.pistore.app.cli.replicas;

import io.pistore.app.cli.volume.ControlClient;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.DataDirOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.group.GroupMembership;
import io.pistore.replication.group.GroupStatus;
import io.pistore.server.control.VolumeChange;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore replicas}: views of the groups of replicated volumes (docs/REPLICATION.md). */
@Command(name = "replicas", description = "Replicated volumes' groups: 'replicas status', membership "
        + "changes online: 'replicas add|remove|replace', and moving the leader: 'replicas transfer'.",
        subcommands = {ReplicasCommand.Status.class, ReplicasCommand.Add.class, ReplicasCommand.Remove.class,
            ReplicasCommand.Replace.class, ReplicasCommand.Transfer.class})
public final class ReplicasCommand {
    /** {@code pistore replicas status --replicas PEERS NAME}: each peer's role, log indexes and lag. */
    @Command(name = "status", sortOptions = false,
            description = {"Asks every peer of the replicated volume NAME for its state and prints one line per peer: "
                    + "role (leader, follower, candidate), the last index of its log, the index it knows committed, "
                    + "the index its replica applied, and its lag (entries behind the leader's log); then the "
                    + "leader and how many members answered. Members the answers name that --replicas does not "
                    + "(added since) are asked too; a peer the leader's configuration leaves out shows as not a member.",
                "A peer that does not answer within the RPC timeout is shown unreachable with the reason. "
                    + "Exit 0 when a leader answered, 3 when none did (an election, or no quorum)."})
    static final class Status implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "NAME", description = "The replicated volume.")
        String name;

        @Option(names = "--replicas", paramLabel = "ID=HOST:PORT,...", required = true,
                description = "The volume's peers (their --replica-listen addresses).")
        String replicas;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            GroupStatus s;
            try {
                s = GroupStatus.of(name, replicas, ReplicationSettings.defaults());
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--replicas: " + e.getMessage());
            }
            s.describe().forEach(out::println);
            return s.leader() == null ? ExitCodes.FAILURE : ExitCodes.OK;
        }
    }

    /** The peer list, checked: a usage error names what is wrong with it. */
    private static void checkPeers(String replicas) {
        try {
            ReplicaPeers.parse(replicas);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--replicas: " + e.getMessage());
        }
    }

    /** What {@code remove} and {@code transfer} share: the volume and the members to reach its group through. */
    static final class GroupOptions {
        @Parameters(paramLabel = "NAME", description = "The replicated volume.")
        String name;

        @Option(names = "--replicas", paramLabel = "ID=HOST:PORT,...", required = true,
                description = "Members of the volume's group to reach it through (at least one running).")
        String replicas;

        /** The members, checked: a usage error names what is wrong with them or with {@code id} (an {@code option}). */
        List<org.apache.ratis.protocol.RaftPeer> peers(String option, String id) {
            try {
                ReplicaPeers.checkId(id);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(option + ": " + e.getMessage());
            }
            checkPeers(replicas);
            return ReplicaPeers.parse(replicas);
        }
    }

    /**
     * What {@code add} and {@code replace} share: the volume, the new peer's data directory (its
     * running serve joins) and the members to reach the group through.
     */
    static final class JoinOptions {
        @Parameters(paramLabel = "NAME", description = "The replicated volume.")
        String name;

        @Mixin
        DataDirOption data;

        @Mixin
        ConfigOption config;

        @Option(names = "--replicas", paramLabel = "ID=HOST:PORT,...", required = true,
                description = "Members of the volume's group to reach it through (at least one running).")
        String replicas;

        /** Asks the serve of --data to join the group, replacing {@code old} (null: adding); prints its lines. */
        Integer send(CommandSpec spec, String old) throws IOException {
            checkPeers(replicas);
            return join(spec, data.dir, VolumeChange.joinReplica(name, replicas, old));
        }
    }

    /** Sends a join to the serve that owns {@code dir} and prints its lines. */
    private static Integer join(CommandSpec spec, Path dir, VolumeChange change) throws IOException {
        Path d = DataDirOption.requireExisting(dir);
        if (!ControlClient.available(d)) {
            throw CliException.usage("no serve runs on --data " + dir + ": start the new peer's serve (with "
                    + "--replica-id and --replica-listen) first");
        }
        List<String> lines;
        try {
            lines = ControlClient.send(d, change);
        } catch (java.net.SocketException e) {
            throw CliException.usage("no serve answers on --data " + dir + " (" + e.getMessage() + "): start the new "
                    + "peer's serve first");
        }
        lines.forEach(spec.commandLine().getOut()::println);
        return ExitCodes.OK;
    }

    /** {@code pistore replicas add NAME --data DIR --replicas PEERS}: the serve of DIR joins as a new member. */
    @Command(name = "add", sortOptions = false,
            description = {"Adds a replica of the replicated volume NAME, online: the running serve of --data DIR "
                    + "(started with --replica-id and --replica-listen, the new peer) creates an empty replica with "
                    + "the volume's format and size, joins the group, catches up from the leader's log, and becomes "
                    + "a member (a joint-consensus configuration change); then it serves the volume too.",
                "Run it on the new peer's machine. Exit 0 when the change is committed; 2 for a refusal (a "
                    + "member already, a volume of that name there); 3 when the group did not answer or the change "
                    + "was not committed: it waits while the new peer catches up, and gives up after 120 s without "
                    + "progress. docs/REPLICATION.md."})
    static final class Add implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        JoinOptions join;

        @Override
        public Integer call() throws IOException {
            return join.send(spec, null);
        }
    }

    /** {@code pistore replicas replace NAME --old ID --data DIR --replicas PEERS}: add this peer, remove ID, in one change. */
    @Command(name = "replace", sortOptions = false,
            description = {"Replaces member ID of the replicated volume NAME by the running serve of --data DIR, "
                    + "online, in one configuration change: the new peer joins and catches up as with 'replicas add', "
                    + "then the group's members become the old ones less ID plus the new peer; ID is told to leave "
                    + "and deletes its replica (one down or cut off leaves by itself once it is back).",
                "Exit codes as 'replicas add'."})
    static final class Replace implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        JoinOptions join;

        @Option(names = "--old", paramLabel = "ID", required = true, description = "The member to replace.")
        String old;

        @Override
        public Integer call() throws IOException {
            try {
                ReplicaPeers.checkId(old);
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--old: " + e.getMessage());
            }
            return join.send(spec, old);
        }
    }

    /** {@code pistore replicas remove NAME --peer ID --replicas PEERS}: the group drops member ID. */
    @Command(name = "remove", sortOptions = false,
            description = {"Removes member ID from the group of the replicated volume NAME, online (a "
                    + "joint-consensus configuration change through the leader); then tells ID to leave the group, "
                    + "and it deletes its replica. A member that is down or cut off is removed all the same and keeps "
                    + "its files until it is back: then it learns of the change from the leader and leaves by "
                    + "itself (or run the same command, naming it in --replicas).",
                "The last member is never removed. Exit 0 when done; 2 for a refusal (no such member, the last "
                    + "one); 3 when no leader answered or the change was not committed in time."})
    static final class Remove implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        GroupOptions group;

        @Option(names = "--peer", paramLabel = "ID", required = true, description = "The member to remove.")
        String peer;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            List<org.apache.ratis.protocol.RaftPeer> peers = group.peers("--peer", peer);
            GroupMembership.Change c;
            try {
                c = GroupMembership.of(group.name, peers, ReplicationSettings.defaults()).change(List.of(), List.of(peer));
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            } catch (ReplicationException e) {
                throw CliException.failure(e.getMessage());
            }
            out.println("volume " + group.name + ": members " + ids(c.before) + " -> " + ids(c.after));
            c.notes.forEach(out::println);
            return ExitCodes.OK;
        }
    }

    /** {@code pistore replicas transfer NAME --to ID --replicas PEERS}: member ID becomes the leader. */
    @Command(name = "transfer", sortOptions = false,
            description = {"Makes member ID the leader of the replicated volume NAME's group, online: the leader "
                    + "brings ID's log up to date and has it take over, so hosts following path states (and "
                    + "iSCSI initiators following ALUA) move to ID; before stopping the leader's machine, the "
                    + "pause its hosts see is then one transfer, not an election.",
                "Exit 0 once ID leads; 2 for an ID that is not a member; 3 when no leader answered or ID did not "
                    + "take over within the operation timeout (it is down, or too far behind): the leader stays."})
    static final class Transfer implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        GroupOptions group;

        @Option(names = "--to", paramLabel = "ID", required = true, description = "The member to lead.")
        String to;

        @Override
        public Integer call() {
            List<org.apache.ratis.protocol.RaftPeer> peers = group.peers("--to", to);
            try {
                io.pistore.replication.volume.LeaderTransfer.to(group.name, peers, to, ReplicationSettings.defaults());
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            } catch (IOException e) {
                throw CliException.failure(e.getMessage());
            }
            spec.commandLine().getOut().println("volume " + group.name + ": " + to + " leads");
            return ExitCodes.OK;
        }
    }

    private static String ids(List<org.apache.ratis.protocol.RaftPeer> peers) {
        return String.join(",", peers.stream().map(p -> p.getId().toString()).toList());
    }
}
