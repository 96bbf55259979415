package io.pistore.security.access;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Which volumes a client may use, and whether only to read, by its {@link ClientIdentity}; read
 * from an access file (docs/SECURITY.md), one rule a line. One format for every listener that
 * checks identities (the NBD frontend and the tcp transport's target):
 *
 * <pre>
 * # CLIENT   VOLUMES          ACCESS
 * alice      disk1,disk2      rw
 * backup     *                ro
 * </pre>
 *
 * <p>{@code *} as the client matches every client with an identity; {@code *} as the volumes
 * matches every volume. The first rule that matches both the client and the volume decides. A
 * volume no rule grants is not listed to that client and is refused as unknown; a client without
 * an identity gets nothing.
 */
public final class AccessRules {
    /** What a client may do with one volume. */
    public enum Grant { NONE, READ_ONLY, READ_WRITE }

    private record Rule(String client, Set<String> volumes, Grant grant) {
        boolean matches(ClientIdentity id, String volume) {
            return (client.equals("*") || id.matches(client)) && (volumes.contains("*") || volumes.contains(volume));
        }
    }

    private final List<Rule> rules;

    private AccessRules(List<Rule> rules) {
        this.rules = rules;
    }

    /** Reads an access file; a line it cannot use is an {@link IllegalArgumentException} naming the file and line. */
    public static AccessRules read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("access file " + file + " is not readable: " + e);
        }
        return parse(lines, file.toString());
    }

    /** Parses the lines of an access file; {@code where} names it in errors. */
    public static AccessRules parse(List<String> lines, String where) {
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String text = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (text.isEmpty()) {
                continue;
            }
            String[] f = text.split("\\s+");
            if (f.length != 3 || !(f[2].equals("ro") || f[2].equals("rw"))) {
                throw new IllegalArgumentException("access file " + where + " line " + (i + 1)
                        + ": expected CLIENT VOLUMES ro|rw, not '" + text + "'");
            }
            for (String v : f[1].split(",")) {
                if (v.isEmpty()) {
                    throw new IllegalArgumentException("access file " + where + " line " + (i + 1)
                            + ": an empty volume name in '" + f[1] + "'");
                }
            }
            rules.add(new Rule(f[0], Set.copyOf(List.of(f[1].split(","))), f[2].equals("ro") ? Grant.READ_ONLY : Grant.READ_WRITE));
        }
        return new AccessRules(List.copyOf(rules));
    }

    /** What {@code client} (null: a client without an identity) may do with {@code volume}. */
    public Grant grant(ClientIdentity client, String volume) {
        if (client == null) {
            return Grant.NONE;
        }
        for (Rule r : rules) {
            if (r.matches(client, volume)) {
                return r.grant();
            }
        }
        return Grant.NONE;
    }

    /** Rules, for the start-up banner. */
    public int size() {
        return rules.size();
    }
}
