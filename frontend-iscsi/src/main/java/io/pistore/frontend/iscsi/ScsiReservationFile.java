package io.pistore.frontend.iscsi;

import io.pistore.engine.volume.PrivateFiles;
import io.pistore.engine.volume.VolumeStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The persistent reservations of one volume kept through a restart of the server (APTPL, SPC-4
 * 5.12.5): {@code VOLUME}{@value VolumeStore#RESERVATIONS_SUFFIX} in the data directory, private
 * like the volume's other files, written whole to a temporary file, fsynced, renamed over the old
 * one and the directory fsynced, so a crash leaves the old state or the new one. Deleting the
 * volume deletes it. Text, one fact a line:
 * <pre>
 * pistore-reservations 1
 * generation N
 * reservation TYPE NEXUS      (when one is held; NEXUS as the registrations name it)
 * key HEX NEXUS               (one a registration, in registration order)
 * all-target-ports NEXUS      (a registration made with ALL_TG_PT)
 * </pre>
 * NEXUS is an initiator port, {@code IQN,i,0xISID}, or an initiator name alone for the
 * registration a SPEC_I_PT format 00b TransportID made for every I_T nexus of that initiator.
 */
final class ScsiReservationFile {
    private static final String MAGIC = "pistore-reservations 1";

    /** What a file holds. */
    record State(int generation, int type, String holder, Map<String, Long> keys, java.util.Set<String> allTargetPorts) {
    }

    private final Path file;

    ScsiReservationFile(Path dir, String volume) {
        this.file = dir.resolve(volume + VolumeStore.RESERVATIONS_SUFFIX);
    }

    Path path() {
        return file;
    }

    /** The state kept, or null when there is no file. A damaged file is an IOException naming it. */
    State load() throws IOException {
        if (!Files.exists(file)) {
            return null;
        }
        return decode(Files.readString(file, StandardCharsets.UTF_8), file.toString(), (w, line) -> false);
    }

    /**
     * The state {@code text} holds ({@link #encode}); {@code where} names it in errors. A line of a
     * kind this format does not know goes to {@code extra}, which says whether it took it; else it
     * is an IOException, as is any line that cannot be read.
     */
    static State decode(String text, String where, java.util.function.BiPredicate<String[], String> extra)
            throws IOException {
        String[] lines = text.split("\n");
        if (lines.length < 2 || !lines[0].equals(MAGIC)) {
            throw new IOException(where + ": not a reservations file (first line is not '" + MAGIC + "')");
        }
        int generation = 0;
        int type = 0;
        String holder = null;
        Map<String, Long> keys = new LinkedHashMap<>();
        java.util.Set<String> allTargetPorts = new java.util.HashSet<>();
        for (int i = 1; i < lines.length; i++) {
            String[] w = lines[i].split(" ", 3);
            try {
                switch (w[0]) {
                    case "generation" -> generation = Integer.parseInt(w[1]);
                    case "reservation" -> {
                        type = Integer.parseInt(w[1]);
                        holder = w[2];
                    }
                    case "key" -> keys.put(w[2], Long.parseUnsignedLong(w[1], 16));
                    case "all-target-ports" -> allTargetPorts.add(w[1]);
                    default -> {
                        if (!extra.test(w, lines[i])) {
                            throw new IOException(where + " line " + (i + 1) + ": unknown '" + w[0] + "'");
                        }
                    }
                }
            } catch (RuntimeException e) {
                throw new IOException(where + " line " + (i + 1) + ": cannot read '" + lines[i] + "'");
            }
        }
        // an all-registrants reservation outlives the registration of the nexus that made it
        if (type != 0 && !ScsiReservations.allRegistrants(type) && !keys.containsKey(holder)) {
            throw new IOException(where + ": the reservation's holder " + holder + " has no registration");
        }
        for (String n : allTargetPorts) {
            if (!keys.containsKey(n)) {
                throw new IOException(where + ": all-target-ports " + n + " has no registration");
            }
        }
        return new State(generation, type, holder, keys, allTargetPorts);
    }

    /** {@code s} in this format's text, one fact a line. */
    static StringBuilder encode(State s) {
        StringBuilder b = new StringBuilder(MAGIC).append('\n');
        b.append("generation ").append(s.generation()).append('\n');
        if (s.type() != 0) {
            b.append("reservation ").append(s.type()).append(' ').append(s.holder()).append('\n');
        }
        for (Map.Entry<String, Long> e : s.keys().entrySet()) {
            b.append("key ").append(Long.toHexString(e.getValue())).append(' ').append(e.getKey()).append('\n');
        }
        for (String n : s.keys().keySet()) {
            if (s.allTargetPorts().contains(n)) {
                b.append("all-target-ports ").append(n).append('\n');
            }
        }
        return b;
    }

    /** Replaces the file with {@code s}, durably. */
    void save(State s) throws IOException {
        StringBuilder b = encode(s);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp); // a leftover keeps its mode; the new one is private
        try (FileChannel c = PrivateFiles.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer data = ByteBuffer.wrap(b.toString().getBytes(StandardCharsets.UTF_8));
            while (data.hasRemaining()) {
                c.write(data);
            }
            c.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
        syncDirectory();
    }

    /** Removes the file (APTPL 0, or nothing left to keep). */
    void delete() throws IOException {
        if (Files.deleteIfExists(file)) {
            syncDirectory();
        }
    }

    private void syncDirectory() throws IOException {
        try (FileChannel c = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            c.force(true);
        }
    }
}
