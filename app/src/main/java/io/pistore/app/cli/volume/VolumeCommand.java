package io.pistore.app.cli.volume;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.DataDirOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.Main;
import io.pistore.app.cli.Numbers;
import io.pistore.app.cli.PiConverters;
import io.pistore.app.cli.Progress;
import io.pistore.app.cli.ReplicaOptions;
import io.pistore.engine.volume.DataDirInUseException;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.server.control.VolumeChange;
import io.pistore.server.control.VolumeUse;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore volume create | list | delete}. */
@Command(name = "volume", description = "Creates, lists, grows and deletes the volumes of a data directory; "
        + "while 'pistore serve' runs on it, through that server.",
        subcommands = {VolumeCommand.Create.class, VolumeCommand.ListVolumes.class, VolumeCommand.Resize.class,
            VolumeCommand.Delete.class})
public final class VolumeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.missingSubcommand(spec);
    }

    /** Opens the existing data directory for a command that needs it to itself while it runs. */
    public static VolumeStore open(DataDirOption data, CommandSpec command) throws IOException {
        return open(data, 0, command, "stop it first");
    }

    /**
     * Opens the existing data directory for {@code command} (its name goes into the directory's lock
     * file); a missing one, or one another process owns, is a usage error: the latter names that
     * process, then {@code hint}.
     */
    public static VolumeStore open(DataDirOption data, long cacheBytes, CommandSpec command, String hint) throws IOException {
        return openStore(data.existing(), cacheBytes, command, hint);
    }

    private static VolumeStore openStore(java.nio.file.Path dir, long cacheBytes, CommandSpec command, String hint)
            throws IOException {
        if (cacheBytes < 0) {
            throw CliException.usage("--cache must not be negative");
        }
        VolumeStore s;
        try {
            s = VolumeStore.open(dir, cacheBytes, command.qualifiedName());
        } catch (DataDirInUseException e) {
            throw inUse(e, hint);
        }
        report(s, command);
        return s;
    }

    /** The store's notes and problems of opening, one line each on stderr. */
    private static void report(VolumeStore s, CommandSpec command) {
        for (String n : s.openNotes()) {
            command.commandLine().getErr().println("pistore: " + n);
        }
        for (String p : s.openProblems()) {
            command.commandLine().getErr().println("pistore: " + p);
        }
    }

    /**
     * The data directory's store, opened here for {@code command}; or null when a running server owns
     * it and listens on its control socket, for a command that then asks that server.
     */
    static VolumeStore openUnlessServed(DataDirOption data, CommandSpec command) throws IOException {
        Path dir = data.existing();
        try {
            VolumeStore s = VolumeStore.open(dir, 0, command.qualifiedName());
            report(s, command);
            return s;
        } catch (DataDirInUseException e) {
            if (ControlClient.available(dir)) {
                return null;
            }
            throw inUse(e, "stop it first");
        }
    }

    /** What a change printed, and whether a running server did it. */
    record Changed(List<String> lines, boolean throughServer) {
    }

    /**
     * Does {@code change} on the data directory's store, opened here; or, when a running server owns
     * the directory and listens on its control socket, sends it there. Another owner (a scrub, a
     * bench) is a usage error naming it.
     */
    static Changed change(Path dir, CommandSpec command, VolumeChange change) throws IOException {
        VolumeStore s;
        try {
            s = VolumeStore.open(dir, 0, command.qualifiedName());
        } catch (DataDirInUseException e) {
            if (ControlClient.available(dir)) {
                try {
                    return new Changed(ControlClient.send(dir, change), true);
                } catch (java.net.SocketException unreachable) {
                    // a socket file left by a server that died while the lock's owner is another
                }
            }
            String tooLong = io.pistore.server.control.ControlSocket.pathTooLong(dir);
            throw inUse(e, tooLong == null ? "stop it first" : "no live volume changes there: " + tooLong
                    + "; or stop it first");
        }
        try (s) {
            report(s, command);
            return new Changed(change.apply(s, VolumeUse.NONE), false);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }

    /** The one-line refusal of a data directory another store owns: who owns it, and what to do. */
    public static CliException inUse(DataDirInUseException e, String hint) {
        return CliException.usage(e.getMessage() + "; " + hint);
    }

    /** What every volume subcommand takes: the data directory and a config file. */
    abstract static class OnDataDir implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DataDirOption data;

        @Mixin
        ConfigOption config;
    }

    @Command(name = "create", sortOptions = false,
            description = "Creates a volume: durable data and metadata files (and --data DIR, if missing). The data "
                    + "file is sparse (it takes room as blocks are written); the metadata file is written in full "
                    + "(every block's PI, marked unwritten): about 1/512 of the size for 8 bytes per 4096.")
    static final class Create extends OnDataDir {
        @Parameters(paramLabel = "NAME", description = "Volume name: letters, digits, '.', '_', '-'.")
        String name;

        @Option(names = "--size", paramLabel = "BYTES", defaultValue = "1GiB", converter = Numbers.LongSizeConverter.class,
                description = "Data size, a whole number of blocks: 1GiB, 512m, 4096 (default: ${DEFAULT-VALUE}).")
        long size;

        @Option(names = "--format", paramLabel = "DATA+META", defaultValue = "4096+8",
                converter = PiConverters.SizesConverter.class,
                description = "Block layout: 512+0, 512+8, 4096+0, 4096+8, 4096+16, 4096+64 … (default: ${DEFAULT-VALUE}).")
        PiConverters.Sizes sizes;

        @Option(names = "--type", paramLabel = "0-3", description = "PI type (default: 1 with metadata, 0 without).")
        Integer type;

        @Option(names = "--guard", paramLabel = "GUARD", converter = PiConverters.GuardConverter.class,
                description = "crc16, ip, crc32c or crc64 (default: crc16 for 8-byte metadata, crc64 from 16).")
        GuardType guard;

        @Option(names = "--pi-location", paramLabel = "first|last", converter = PiConverters.LocationConverter.class,
                description = "Where the PI sits in the metadata (default: first).")
        PiLocation location;

        @Option(names = "--replicas", paramLabel = "ID=HOST:PORT,...",
                description = "Create this target's replica of a replicated volume whose peers these are "
                        + "(with --replica-id; run on every peer: before its serve, or through its running serve, "
                        + "which then serves it; docs/REPLICATION.md).")
        String replicas;

        @Mixin
        ReplicaOptions replica;

        @Override
        public Integer call() throws IOException {
            BlockFormat f;
            try {
                f = BlockFormat.of(sizes.data(), sizes.meta());
                if (guard != null) f = f.withGuard(guard);
                if (type != null) f = f.withType(PiType.of(type));
                if (location != null) f = f.withLocation(location);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            if (size <= 0 || size % f.dataSize() != 0) {
                throw CliException.usage("--size " + size + " is not a positive multiple of the " + f.dataSize()
                        + "-byte block");
            }
            if (java.nio.file.Files.exists(data.dir) && !java.nio.file.Files.isDirectory(data.dir)) {
                throw CliException.usage("--data " + data.dir + " is not a directory");
            }
            if (replicas != null) {
                return createReplica(f);
            }
            long blocks = size / f.dataSize();
            warnIfLargerThanFree(f, blocks, false);
            Changed c = change(data.dir, spec, VolumeChange.create(name, f, blocks));
            spec.commandLine().getOut().println(c.lines().get(0) + ", in " + data.dir
                    + (c.throughServer() ? ", through the running server" : ""));
            return ExitCodes.OK;
        }

        /**
         * One warning line when the volume's files would not fit in the free space of the directory's
         * file system: the data file, and on a disk the metadata file, are sparse, so the create
         * succeeds, and writes fail once the disk is full. The journal's room is not (nor, in memory,
         * the metadata file, which is filled there): a volume whose journal does not fit is refused by the store.
         */
        private void warnIfLargerThanFree(BlockFormat f, long blocks, boolean replica) {
            long dataBytes = blocks * f.dataSize();
            long metaBytes = blocks * (long) f.metadataSize();
            // a replica's Raft log grows to four times the volume between snapshots, and a snapshot copies it once
            long raftBytes = replica ? 5 * (dataBytes + metaBytes) : 0;
            Path at = data.dir.toAbsolutePath();
            while (at != null && !Files.exists(at)) {
                at = at.getParent(); // the directory may not exist yet: ask the file system it will be on
            }
            if (at == null) {
                return;
            }
            long free;
            try {
                free = Files.getFileStore(at).getUsableSpace();
            } catch (IOException e) {
                return; // no figure to compare with; the create itself reports real failures
            }
            boolean inMemory = io.pistore.engine.volume.file.FileVolume.inMemory(at);
            long journalBytes = io.pistore.engine.volume.file.FileVolume.journalBytes(f, blocks, inMemory);
            long bytes = dataBytes + metaBytes + journalBytes + raftBytes;
            String sparse = metaBytes == 0 || inMemory ? "the data file is sparse" : "the data and metadata files are sparse";
            if (bytes > free && journalBytes + (inMemory ? metaBytes : 0) <= free) {
                spec.commandLine().getErr().println("pistore volume create: warning: " + name + " needs "
                        + Progress.bytes(bytes) + " (data " + Progress.bytes(dataBytes) + ", metadata "
                        + Progress.bytes(metaBytes) + ", journal " + Progress.bytes(journalBytes)
                        + (replica ? ", Raft log and a snapshot up to " + Progress.bytes(raftBytes) : "")
                        + ") but the file system of " + data.dir + " has " + Progress.bytes(free)
                        + (replica ? " free; " + sparse + " and the Raft log grows with writes, so this peer"
                                + " falls behind once it is full"
                        : " free; " + sparse + " (they take room as blocks are written), so writes will fail"
                                + " once it is full"));
            }
        }

        /**
         * This peer's replica, made offline: the empty volume and its peer list, in DATA/replication;
         * serve joins the volume's group on its --replica-listen address, the one the peer list names.
         */
        private Integer createReplica(BlockFormat f) throws IOException {
            String me = replica.id("with --replicas");
            java.util.List<org.apache.ratis.protocol.RaftPeer> peers;
            try {
                peers = io.pistore.replication.ReplicaPeers.parse(replicas);
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--replicas: " + e.getMessage());
            }
            try {
                VolumeStore.checkName(name);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            io.pistore.engine.volume.PrivateFiles.createDirectories(data.dir);
            warnIfLargerThanFree(f, size / f.dataSize(), true);
            try {
                io.pistore.replication.node.ReplicaNode.createReplicaOffline(me, ReplicaOptions.dir(data.dir), name, f,
                        size / f.dataSize(), peers);
            } catch (DataDirInUseException e) {
                if (ControlClient.available(data.dir)) {
                    try {
                        // a running serve's replica peer: it creates the replica, joins the group and serves it
                        ControlClient.send(data.dir, VolumeChange.createReplica(name, f, size / f.dataSize(), me,
                                io.pistore.replication.ReplicaPeers.describe(peers)))
                                .forEach(spec.commandLine().getOut()::println);
                        return ExitCodes.OK;
                    } catch (java.net.SocketException unreachable) {
                        // a socket file left by a server that died while the lock's owner is another
                    }
                }
                throw inUse(e, "stop it first");
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            spec.commandLine().getOut().println("created replica " + me + " of " + name + ": " + (size / f.dataSize())
                    + " blocks, " + f + ", in " + ReplicaOptions.dir(data.dir) + "; peers "
                    + io.pistore.replication.ReplicaPeers.describe(peers));
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", description = "Lists the volumes: name, blocks, size, format; a warning line on stderr "
            + "for the directory and each volume whose files give group or others access.")
    static final class ListVolumes extends OnDataDir {
        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            Path dir = data.existing();
            try (VolumeStore s = VolumeStore.open(dir, 0, spec.qualifiedName())) {
                report(s, spec);
                VolumeChange.list().apply(s, VolumeUse.NONE).forEach(out::println);
                OfflineReplicas.listLines(dir, spec.qualifiedName()).forEach(out::println);
                return s.openProblems().isEmpty() ? ExitCodes.OK : ExitCodes.FAILURE;
            } catch (DataDirInUseException e) {
                if (!ControlClient.available(dir)) {
                    throw inUse(e, "stop it first");
                }
                change(dir, spec, VolumeChange.list()).lines().forEach(out::println);
                // the server said these when it opened the store; whoever lists is told too
                io.pistore.engine.volume.PrivateFiles.warnings(dir)
                        .forEach(w -> spec.commandLine().getErr().println("pistore: warning: " + w));
                return ExitCodes.OK;
            }
        }
    }

    @Command(name = "delete", description = "Deletes a volume and its files; a replicated volume (through the "
            + "running serve of one of its peers) on every member of its group.")
    static final class Delete extends OnDataDir {
        @Parameters(paramLabel = "NAME")
        String name;

        @Option(names = "--force", description = "Delete a volume a running server is using: its NBD connections "
                + "end first, and its hosts' later requests find no such volume. For a replicated volume also: "
                + "delete it while a minority of its members is unreachable (they keep their copy until the same "
                + "command runs on them).")
        boolean force;

        @Option(names = "--replica-only", description = "On a peer whose serve is stopped: delete only this peer's "
                + "replica of a replicated volume (its files, peer list and Raft log, in DATA/replication), "
                + "asking no other peer; for a leftover copy from a forced delete.")
        boolean replicaOnly;

        @Override
        public Integer call() throws IOException {
            if (replicaOnly) {
                return deleteReplicaOnly();
            }
            change(data.existing(), spec, VolumeChange.delete(name, force)).lines()
                    .forEach(spec.commandLine().getOut()::println);
            return ExitCodes.OK;
        }

        /**
         * This peer's replica only, offline: the data directory is held for the command (a running serve
         * owns it and is named), and the deletion itself is {@link io.pistore.replication.group.OfflineReplicaDeletion}.
         */
        private Integer deleteReplicaOnly() throws IOException {
            if (force) {
                throw CliException.usage("--replica-only deletes one stopped peer's replica and takes no --force");
            }
            Path dir = data.existing();
            String stopped = "--replica-only works on a stopped peer: stop its serve first (while it runs, "
                    + "'pistore volume delete " + name + " --data " + dir + "' deletes the volume on every member)";
            VolumeStore s;
            try {
                s = VolumeStore.open(dir, 0, spec.qualifiedName());
            } catch (DataDirInUseException e) {
                throw inUse(e, stopped);
            }
            io.pistore.replication.group.OfflineReplicaDeletion.Deleted d;
            Path replication = ReplicaOptions.dir(dir);
            try (s) {
                report(s, spec);
                try {
                    VolumeStore.checkName(name);
                } catch (IllegalArgumentException e) {
                    throw CliException.usage(e.getMessage());
                }
                if (!io.pistore.replication.group.OfflineReplicaDeletion.holds(replication, name)) {
                    throw CliException.usage(s.get(name) != null
                            ? "volume " + name + " in " + dir + " is not replicated: --replica-only deletes only a "
                                    + "replica; delete it without --replica-only"
                            : "no replica of volume " + name + " in " + replication);
                }
                d = io.pistore.replication.group.OfflineReplicaDeletion.delete(replication, name);
            } catch (DataDirInUseException e) {
                throw inUse(e, stopped);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            PrintWriter out = spec.commandLine().getOut();
            out.println("deleted this peer's replica of " + name + " in " + replication + " (" + String.join(", ",
                    d.parts()) + "); no other peer was asked");
            if (!d.peers().isEmpty()) {
                out.println("its peer list named " + d.peers() + "; if volume " + name + " lives on there, remove this "
                        + "peer from its group with 'pistore replicas remove'");
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "resize", description = "Grows a volume (new blocks read as unwritten); while a server runs, "
            + "its clients see the new size when they next connect.")
    static final class Resize extends OnDataDir {
        @Parameters(paramLabel = "NAME")
        String name;

        @Option(names = "--size", paramLabel = "BYTES", required = true, converter = Numbers.LongSizeConverter.class,
                description = "The new data size, a whole number of blocks, not smaller than now: 2GiB, 1t.")
        long size;

        @Override
        public Integer call() throws IOException {
            // in bytes: the store that owns the volume knows its block size
            change(data.existing(), spec, VolumeChange.resize(name, size)).lines()
                    .forEach(spec.commandLine().getOut()::println);
            return ExitCodes.OK;
        }
    }
}
