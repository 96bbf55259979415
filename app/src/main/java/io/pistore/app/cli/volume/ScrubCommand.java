package io.pistore.app.cli.volume;

import io.pistore.server.control.VolumeChange;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.DataDirOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.QuietOption;
import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.replication.group.GroupStatus;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.volume.ReplicaScrubReport;
import io.pistore.replication.volume.ReplicatedVolume;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore scrub}: checks every stored block's PI; repairs nothing. */
@Command(name = "scrub", sortOptions = false,
        description = {"Reads every block of a volume and checks its stored PI: the guard always, the reference tag "
                + "for Type 1 (it follows the LBA); not the application tag, which belongs to the writer.",
            "Prints 'lba=N error=guard|ref expected=0x... actual=0x...' for each bad block and a summary; "
                + "exit 0 when clean, 1 when bad blocks were found. While a serve owns --data, that server does "
                + "the scrub as it serves the volume (its control socket).",
            "With --replicas, scrubs a replicated volume through its running peers: every replica is checked, "
                + "bad copies are rewritten from a good replica (one line each), blocks bad on every replica are "
                + "reported; exit 0 when nothing is left bad, 1 otherwise (docs/REPLICATION.md)."})
public final class ScrubCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    QuietOption quiet;

    @Mixin
    DataDirOption data;

    @Mixin
    ConfigOption config;

    @Parameters(paramLabel = "NAME", description = "The volume.")
    String name;

    @Option(names = "--max-errors", paramLabel = "N", defaultValue = "100",
            description = "Print at most N bad-block lines; all are counted (default: ${DEFAULT-VALUE}).")
    long maxErrors;

    @Option(names = "--replicas", paramLabel = "ID=HOST:PORT,...",
            description = "Scrub the replicated volume NAME through these running peers (their --replica-listen "
                    + "addresses): every member of its group, as its leader holds them, is checked and named (one "
                    + "added since too; one named but removed is said), and what a good replica has is repaired; "
                    + "--data is not used.")
    String replicas;

    @Override
    public Integer call() throws Exception {
        if (maxErrors < 0) {
            throw CliException.usage("--max-errors must not be negative");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (replicas != null) {
            return scrubReplicated(out, err);
        }
        VolumeStore opened = VolumeCommand.openUnlessServed(data, spec);
        if (opened == null) {
            return scrubServed(out);
        }
        try (VolumeStore s = opened) {
            Volume v = s.get(name);
            if (v == null) {
                boolean damaged = s.openProblems().stream().anyMatch(p -> p.startsWith("volume " + name + " not opened:"));
                String replicated = OfflineReplicas.hint(data.dir, name);
                throw CliException.usage(damaged
                        ? "volume '" + name + "' is in " + data.dir + " but could not be opened (the line above says why)"
                        : replicated != null ? replicated : "no volume named '" + name + "' in " + data.dir);
            }
            long bytesPerBlock = v.format().blockSize();
            Scrubber.Report r;
            try (Progress progress = quiet.progress(err, "scrub " + name, v.blockCount() * bytesPerBlock)) {
                long[] last = {0};
                r = Scrubber.scrub(v, out, maxErrors, done -> {
                    progress.advance((done - last[0]) * bytesPerBlock);
                    last[0] = done;
                });
            }
            return r.clean() ? ExitCodes.OK : ExitCodes.BAD_BLOCKS;
        }
    }

    /** A volume that a running server serves, scrubbed by that server while it serves. */
    private Integer scrubServed(PrintWriter out) throws java.io.IOException {
        List<String> lines;
        try {
            lines = ControlClient.send(data.dir, VolumeChange.scrub(name, maxErrors));
        } catch (java.net.SocketException e) {
            throw CliException.failure("the server that owns " + data.dir + " does not answer on its control socket: "
                    + e.getMessage());
        }
        String result = lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        if (!result.startsWith(VolumeChange.SCRUB_RESULT)) {
            throw CliException.failure("the server answered no scrub result");
        }
        lines.subList(0, lines.size() - 1).forEach(out::println);
        return result.endsWith("clean") ? ExitCodes.OK : ExitCodes.BAD_BLOCKS;
    }

    /**
     * The members to scrub: the group's as its leader holds them, which --replicas may not all name
     * (a member added since) or may name wrongly (one removed since: said, not checked); the list
     * given when no leader answers (the scrub then waits for one, as any request does).
     */
    private String members(PrintWriter out) {
        GroupStatus status;
        try {
            status = GroupStatus.of(name, replicas, ReplicationSettings.defaults());
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--replicas: " + e.getMessage());
        }
        String current = status.currentMembers();
        if (current == null) {
            return replicas;
        }
        java.util.Set<String> named = new java.util.HashSet<>();
        io.pistore.replication.ReplicaPeers.parse(replicas).forEach(p -> named.add(p.getId().toString()));
        String ids = String.join(",", io.pistore.replication.ReplicaPeers.parse(current).stream()
                .map(p -> p.getId().toString()).toList());
        for (GroupStatus.Member m : status.members) {
            if (!m.member) {
                out.println("replica " + m.id + " is not a member of the group of volume " + name + " (members " + ids
                        + "): not checked");
            } else if (!named.contains(m.id)) {
                out.println("replica " + m.id + " is a member that --replicas does not name: checked too");
            }
        }
        return current;
    }

    /** Every replica of a replicated volume, through its group; repairs are printed as they happen. */
    private Integer scrubReplicated(PrintWriter out, PrintWriter err) throws Exception {
        String peers = members(out);
        ReplicatedVolume v;
        try {
            v = ReplicatedVolume.connect(name, peers, ReplicationSettings.defaults(), line -> {
                synchronized (out) {
                    out.println(line);
                }
            });
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--replicas: " + e.getMessage());
        } catch (ReplicationException e) {
            throw CliException.failure(e.getMessage()); // its peers unreachable, as replicas status: exit 3
        }
        try (v) {
            long bytesPerBlock = v.format().blockSize();
            ReplicaScrubReport r;
            try (Progress progress = quiet.progress(err, "scrub " + name, v.blockCount() * bytesPerBlock)) {
                long[] last = {0};
                r = v.scrub(done -> {
                    progress.advance((done - last[0]) * bytesPerBlock);
                    last[0] = done;
                });
            }
            for (java.util.Map.Entry<String, String> u : r.unreachable.entrySet()) {
                out.println("replica " + u.getKey() + " not checked: " + u.getValue());
            }
            out.println(r.summary(v.format(), v.group().getPeers().stream().map(p -> p.getId().toString()).toList(),
                    maxErrors));
            return r.unrepairable.isEmpty() && r.unreachable.isEmpty() ? ExitCodes.OK : ExitCodes.BAD_BLOCKS;
        }
    }
}
