package io.pistore.app.cli;

import io.pistore.replication.GroupStatus;
import io.pistore.replication.ReplicationSettings;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore replicas}: views of the groups of replicated volumes (docs/REPLICATION.md). */
@Command(name = "replicas", description = "Replicated volumes' groups: see 'replicas status'.",
        subcommands = {ReplicasCommand.Status.class})
final class ReplicasCommand {
    /** {@code pistore replicas status --replicas PEERS NAME}: each peer's role, log indexes and lag. */
    @Command(name = "status", sortOptions = false,
            description = {"Asks every peer of the replicated volume NAME for its state and prints one line per peer: "
                    + "role (leader, follower, candidate), the last index of its log, the index it knows committed, "
                    + "the index its replica applied, and its lag (entries behind the leader's log); then the "
                    + "leader and how many peers answered.",
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
}
