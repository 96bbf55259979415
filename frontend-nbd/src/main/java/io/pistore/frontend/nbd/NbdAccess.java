package io.pistore.frontend.nbd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Which exports a TLS client may use, and whether only to read, by the common name (CN) of its
 * certificate's subject; read from an access file (docs/SECURITY.md), one rule a line:
 *
 * <pre>
 * # CLIENT   EXPORTS          ACCESS
 * alice      disk1,disk2      rw
 * backup     *                ro
 * </pre>
 *
 * <p>{@code *} as the client matches every client with a verified certificate; {@code *} as the
 * exports matches every export. The first rule that matches both the client and the export
 * decides. An export no rule grants is not listed to that client and is refused as unknown; a
 * client without a certificate gets nothing.
 */
public final class NbdAccess {
    /** What a client may do with one export. */
    public enum Grant { NONE, READ_ONLY, READ_WRITE }

    private record Rule(String client, Set<String> exports, Grant grant) {
        boolean matches(String cn, String export) {
            return (client.equals("*") || client.equals(cn)) && (exports.contains("*") || exports.contains(export));
        }
    }

    private final List<Rule> rules;

    private NbdAccess(List<Rule> rules) {
        this.rules = rules;
    }

    /** Reads an access file; a line it cannot use is an {@link IllegalArgumentException} naming the file and line. */
    public static NbdAccess read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("access file " + file + " is not readable: " + e.getMessage());
        }
        return parse(lines, file.toString());
    }

    static NbdAccess parse(List<String> lines, String where) {
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
                        + ": expected CLIENT EXPORTS ro|rw, not '" + text + "'");
            }
            rules.add(new Rule(f[0], Set.of(f[1].split(",")), f[2].equals("ro") ? Grant.READ_ONLY : Grant.READ_WRITE));
        }
        return new NbdAccess(List.copyOf(rules));
    }

    /** What the client whose certificate subject is {@code subject} (RFC 2253; null: none) may do with {@code export}. */
    public Grant grant(String subject, String export) {
        String cn = commonName(subject);
        if (cn == null) {
            return Grant.NONE;
        }
        for (Rule r : rules) {
            if (r.matches(cn, export)) {
                return r.grant();
            }
        }
        return Grant.NONE;
    }

    /** The CN of an RFC 2253 subject, or null. */
    static String commonName(String subject) {
        if (subject == null) {
            return null;
        }
        try {
            List<Rdn> rdns = new LdapName(subject).getRdns();
            for (int i = rdns.size() - 1; i >= 0; i--) {
                if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
                    return rdns.get(i).getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }

    /** Rules, for the start-up banner. */
    public int size() {
        return rules.size();
    }
}
