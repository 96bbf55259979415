package io.pistore.app.cli;

import io.pistore.engine.volume.DataDirInUseException;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code pistore volume create | list | delete}. */
@Command(name = "volume", description = "Creates, lists and deletes the volumes of a data directory.",
        subcommands = {VolumeCommand.Create.class, VolumeCommand.ListVolumes.class, VolumeCommand.Delete.class})
final class VolumeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.missingSubcommand(spec);
    }

    /** Opens the existing data directory for a command that needs it to itself while it runs. */
    static VolumeStore open(DataDirOption data, CommandSpec command) throws IOException {
        return open(data, 0, command, "stop it first");
    }

    /**
     * Opens the existing data directory for {@code command} (its name goes into the directory's lock
     * file); a missing one, or one another process owns, is a usage error: the latter names that
     * process, then {@code hint}.
     */
    static VolumeStore open(DataDirOption data, long cacheBytes, CommandSpec command, String hint) throws IOException {
        return openStore(data.existing(), cacheBytes, command, hint);
    }

    /** As {@link #open(DataDirOption, CommandSpec)}, creating the directory when it is missing. */
    static VolumeStore openOrCreate(DataDirOption data, CommandSpec command) throws IOException {
        return openStore(data.dir, 0, command, "stop it first");
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
        for (String n : s.openNotes()) {
            command.commandLine().getErr().println("pistore: " + n);
        }
        for (String p : s.openProblems()) {
            command.commandLine().getErr().println("pistore: " + p);
        }
        return s;
    }

    /** The one-line refusal of a data directory another store owns: who owns it, and what to do. */
    static CliException inUse(DataDirInUseException e, String hint) {
        return CliException.usage(e.getMessage() + "; " + hint);
    }

    @Command(name = "create", sortOptions = false,
            description = "Creates a volume: durable data and metadata files (and --data DIR, if missing).")
    static final class Create implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DataDirOption data;

        @Mixin
        ConfigOption config;

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
                        + "(with --replica-id; run on every peer, before its serve; docs/REPLICATION.md).")
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
            if (replicas != null) {
                return createReplica(f);
            }
            try (VolumeStore s = openOrCreate(data, spec)) {
                s.create(name, f, size / f.dataSize());
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            spec.commandLine().getOut().println("created " + name + ": " + (size / f.dataSize()) + " blocks, " + f
                    + ", in " + data.dir);
            return ExitCodes.OK;
        }

        /**
         * This peer's replica, made offline: the empty volume and its peer list, in DATA/replication;
         * serve joins the volume's group on its --replica-listen address, the one the peer list names.
         */
        private Integer createReplica(BlockFormat f) throws IOException {
            String me = replica.id("with --replicas");
            java.util.List<org.apache.ratis.protocol.RaftPeer> peers;
            try {
                peers = io.pistore.replication.PeerList.parse(replicas);
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--replicas: " + e.getMessage());
            }
            try {
                VolumeStore.checkName(name);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            java.nio.file.Files.createDirectories(data.dir);
            try {
                io.pistore.replication.ReplicaNode.createReplicaOffline(me, ReplicaOptions.dir(data.dir), name, f,
                        size / f.dataSize(), peers);
            } catch (DataDirInUseException e) {
                throw inUse(e, "stop it first");
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            spec.commandLine().getOut().println("created replica " + me + " of " + name + ": " + (size / f.dataSize())
                    + " blocks, " + f + ", in " + ReplicaOptions.dir(data.dir) + "; peers "
                    + io.pistore.replication.PeerList.describe(peers));
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", description = "Lists the volumes: name, blocks, size, format.")
    static final class ListVolumes implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DataDirOption data;

        @Mixin
        ConfigOption config;

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            try (VolumeStore s = open(data, spec)) {
                out.printf("%-24s %12s %12s  %s%n", "NAME", "BLOCKS", "SIZE", "FORMAT");
                for (Volume v : s.list()) {
                    out.printf("%-24s %12d %12s  %s%n", v.name(), v.blockCount(),
                            Progress.bytes(v.blockCount() * v.format().dataSize()), v.format());
                }
                return s.openProblems().isEmpty() ? ExitCodes.OK : ExitCodes.FAILURE;
            }
        }
    }

    @Command(name = "delete", description = "Deletes a volume and its files.")
    static final class Delete implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DataDirOption data;

        @Mixin
        ConfigOption config;

        @Parameters(paramLabel = "NAME")
        String name;

        @Override
        public Integer call() throws IOException {
            try (VolumeStore s = open(data, spec)) {
                s.delete(name);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            spec.commandLine().getOut().println("deleted " + name);
            return ExitCodes.OK;
        }
    }
}
