package io.pistore.server.control;

import io.pistore.engine.volume.ByteCount;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One {@code pistore volume} command, done the same way on a store the command opened itself and,
 * sent over the control socket, by the server that owns the store (see docs/OPERATIONS.md). Its wire
 * form is one line of tab-separated words: the verb, then its arguments.
 */
public record VolumeChange(String verb, List<String> args) {
    public static VolumeChange create(String name, BlockFormat f, long blocks) {
        return new VolumeChange("create", List.of(name, Long.toString(blocks), Integer.toString(f.dataSize()),
                Integer.toString(f.metadataSize()), f.guard().cliName(), Integer.toString(f.type().number()),
                f.location().name().toLowerCase(Locale.ROOT)));
    }

    /** Grows a volume to {@code bytes} of data, a whole number of its blocks. */
    public static VolumeChange resize(String name, long bytes) {
        return new VolumeChange("resize", List.of(name, Long.toString(bytes)));
    }

    public static VolumeChange delete(String name, boolean force) {
        return new VolumeChange("delete", List.of(name, Boolean.toString(force)));
    }

    /**
     * Makes the server's replica peer a member of the running group of replicated volume {@code name},
     * reached through {@code peers}; with {@code replacing} (an id, or empty) that member leaves in the
     * same change. Only a serve with {@code --replica-listen} does it ({@link ReplicaJoiner}).
     */
    public static VolumeChange joinReplica(String name, String peers, String replacing) {
        return new VolumeChange(JOIN_REPLICA, List.of(name, peers, replacing == null ? "" : replacing));
    }

    public static final String JOIN_REPLICA = "replica-join";

    /**
     * Creates the server's replica {@code replicaId} of a new replicated volume whose group is
     * {@code peers} ({@code ID=HOST:PORT,...}) and serves it: as the offline {@code volume create
     * --replicas} does, on a running serve ({@link ReplicaJoiner#create}).
     */
    public static VolumeChange createReplica(String name, BlockFormat f, long blocks, String replicaId, String peers) {
        List<String> a = new ArrayList<>(create(name, f, blocks).args());
        a.add(replicaId);
        a.add(peers);
        return new VolumeChange(CREATE_REPLICA, a);
    }

    public static final String CREATE_REPLICA = "replica-create";

    /** The format a {@code create} or {@link #createReplica} names (its arguments 2 to 6). */
    BlockFormat format() {
        return BlockFormat.of(Integer.parseInt(args.get(2)), Integer.parseInt(args.get(3)), GuardType.parse(args.get(4)),
                PiType.of(Integer.parseInt(args.get(5))), PiLocation.parse(args.get(6)));
    }

    /**
     * Scrubs a served volume while it serves (reads take each block's lock, so every block is checked
     * whole in one version); the reply's lines end with {@link #SCRUB_RESULT} and {@code clean} or
     * {@code bad}. A replicated volume is scrubbed through its peers instead.
     */
    public static VolumeChange scrub(String name, long maxErrors) {
        return new VolumeChange("scrub", List.of(name, Long.toString(maxErrors)));
    }

    /** The last line of a scrub's reply, before its outcome: no line the scrub prints starts so. */
    public static final String SCRUB_RESULT = "scrub-result\t";

    public static VolumeChange list() {
        return new VolumeChange("list", List.of());
    }

    public String encode() {
        List<String> words = new ArrayList<>();
        words.add(verb);
        words.addAll(args);
        return String.join("\t", words);
    }

    /** The change a line names; IllegalArgumentException for a line that names none. */
    public static VolumeChange decode(String line) {
        List<String> words = Arrays.asList(line.split("\t", -1));
        VolumeChange c = new VolumeChange(words.get(0), List.copyOf(words.subList(1, words.size())));
        int want = switch (c.verb) {
            case "create" -> 7;
            case "resize", "delete", "scrub" -> 2;
            case "list" -> 0;
            case JOIN_REPLICA -> 3;
            case CREATE_REPLICA -> 9;
            default -> throw new IllegalArgumentException("unknown control request '" + c.verb + "'");
        };
        if (c.args.size() != want) {
            throw new IllegalArgumentException("control request '" + c.verb + "' takes " + want + " arguments, not "
                    + c.args.size());
        }
        return c;
    }

    /**
     * Does the change on {@code store} and returns what the command prints. Usage errors (a name
     * that does not exist, a volume in use) are IllegalArgumentException with a one-line message.
     */
    public List<String> apply(VolumeStore store, VolumeUse use) throws IOException {
        switch (verb) {
            case "create": {
                BlockFormat f = format();
                long blocks = Long.parseLong(args.get(1));
                store.create(args.get(0), f, blocks);
                return List.of("created " + args.get(0) + ": " + blocks + " blocks, " + f);
            }
            case "resize": {
                Volume v = existing(store, args.get(0));
                long old = v.blockCount();
                long blocks = blocksOf(Long.parseLong(args.get(1)), v);
                store.resize(args.get(0), blocks);
                if (old != blocks) {
                    use.changed(args.get(0));
                }
                return List.of(old == blocks ? args.get(0) + " already has " + blocks + " blocks"
                        : "resized " + args.get(0) + ": " + old + " -> " + blocks + " blocks");
            }
            case "delete": {
                String name = args.get(0);
                existing(store, name);
                List<String> out = new ArrayList<>();
                String why = use.inUse(name);
                if (why != null) {
                    if (!Boolean.parseBoolean(args.get(1))) {
                        throw new IllegalArgumentException("volume " + name + " is in use (" + why
                                + "); --force ends its connections and deletes it");
                    }
                    int ended = use.disconnect(name);
                    if (ended > 0) {
                        out.add("ended " + ended + " client connection(s) (NBD, iSCSI) to " + name);
                    }
                }
                store.delete(name);
                out.add("deleted " + name);
                return out;
            }
            case "scrub": {
                String name = args.get(0);
                Volume v = existing(store, name);
                if (store.storage(name) instanceof io.pistore.replication.volume.ReplicatedVolume) {
                    throw new IllegalArgumentException("volume " + name + " is replicated: scrub every replica through "
                            + "its peers with --replicas ID=HOST:PORT,... (docs/REPLICATION.md)");
                }
                java.io.StringWriter text = new java.io.StringWriter();
                io.pistore.engine.scrub.Scrubber.Report r = io.pistore.engine.scrub.Scrubber.scrub(v,
                        new java.io.PrintWriter(text), Long.parseLong(args.get(1)), done -> { });
                List<String> out = new ArrayList<>(text.toString().lines().toList());
                out.add(SCRUB_RESULT + (r.clean() ? "clean" : "bad"));
                return out;
            }
            case "list": {
                List<String> out = new ArrayList<>();
                out.add(String.format("%-24s %12s %12s  %s", "NAME", "BLOCKS", "SIZE", "FORMAT"));
                for (Volume v : store.list()) {
                    out.add(String.format("%-24s %12d %12s  %s", v.name(), v.blockCount(),
                            ByteCount.format(v.blockCount() * v.format().dataSize()), v.format())
                            + (store.storage(v.name()) instanceof io.pistore.replication.volume.ReplicatedVolume r
                                    ? "  replicated on "
                                    + io.pistore.replication.ReplicaPeers.describe(r.group().getPeers().stream().toList())
                                    : ""));
                }
                return out;
            }
            default:
                throw new IllegalArgumentException("unknown control request '" + verb + "'");
        }
    }

    /** The block count of {@code bytes} of {@code v}'s data: a positive whole number of its blocks, else a usage error. */
    static long blocksOf(long bytes, Volume v) {
        int bs = v.format().dataSize();
        if (bytes <= 0 || bytes % bs != 0) {
            throw new IllegalArgumentException("--size " + bytes + " is not a positive multiple of the " + bs
                    + "-byte block");
        }
        return bytes / bs;
    }

    private static Volume existing(VolumeStore store, String name) {
        Volume v = store.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no volume named " + name);
        }
        return v;
    }
}
