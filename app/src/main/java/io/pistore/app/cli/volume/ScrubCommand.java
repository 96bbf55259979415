package io.pistore.app.cli.volume;

import io.pistore.app.cli.BadBlockReport;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.DataDirOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.QuietOption;
import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.CheckFlags;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
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
                + "exit 0 when clean, 1 when bad blocks were found.",
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
            description = "Scrub the replicated volume NAME on these running peers (their --replica-listen addresses) "
                    + "and repair what a good replica has; --data is not used.")
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
        try (VolumeStore s = VolumeCommand.open(data, spec)) {
            Volume v = s.get(name);
            if (v == null) {
                boolean damaged = s.openProblems().stream().anyMatch(p -> p.startsWith("volume " + name + " not opened:"));
                String replicated = OfflineReplicas.hint(data.dir, name);
                throw CliException.usage(damaged
                        ? "volume '" + name + "' is in " + data.dir + " but could not be opened (the line above says why)"
                        : replicated != null ? replicated : "no volume named '" + name + "' in " + data.dir);
            }
            CheckFlags checks = Scrubber.checks(v.format());
            BadBlockReport report = new BadBlockReport(out, maxErrors, v.format(), checks);
            long bytesPerBlock = v.format().blockSize();
            Scrubber.Report r;
            try (Progress progress = quiet.progress(err, "scrub " + name, v.blockCount() * bytesPerBlock)) {
                long[] last = {0};
                r = Scrubber.scrub(v, e -> report.add(0, List.of(e)), done -> {
                    progress.advance((done - last[0]) * bytesPerBlock);
                    last[0] = done;
                });
            }
            out.println(report.summary(r.blocks) + ", " + r.unwrittenBlocks + " unwritten");
            return r.clean() ? ExitCodes.OK : ExitCodes.BAD_BLOCKS;
        }
    }

    /** Every replica of a replicated volume, through its group; repairs are printed as they happen. */
    private Integer scrubReplicated(PrintWriter out, PrintWriter err) throws Exception {
        ReplicatedVolume v;
        try {
            v = ReplicatedVolume.connect(name, replicas, ReplicationSettings.defaults(), line -> {
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
            ReplicatedVolume.ScrubReport r;
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
            StringBuilder bad = new StringBuilder();
            r.badCopies.forEach((id, n) -> bad.append(bad.length() == 0 ? "" : " ").append(id).append('=').append(n));
            out.println("checked " + r.blocks + " blocks (" + v.format() + ") on " + v.group().getPeers().size()
                    + " replicas: " + (bad.length() == 0 ? "no bad copies" : "bad copies " + bad) + ", "
                    + r.repairedCopies + " rewritten, " + r.unrepairable.size() + " bad on every replica"
                    + (r.unrepairable.isEmpty() ? "" : " (lba " + r.unrepairable.stream().limit(maxErrors)
                            .map(String::valueOf).collect(java.util.stream.Collectors.joining(", ")) + ")"));
            return r.unrepairable.isEmpty() && r.unreachable.isEmpty() ? ExitCodes.OK : ExitCodes.BAD_BLOCKS;
        }
    }
}
