package io.pistore.frontend.iscsi;

import io.pistore.security.tls.KeyFilePermissions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CHAP secrets of an iSCSI portal, from a secrets file (docs/ISCSI.md), one name and secret a
 * line:
 *
 * <pre>
 * # KIND      NAME                              SECRET
 * initiator   alice                             alice-secret-12
 * initiator   iqn.2026-12.org.example:backup    backup-secret-34
 * target      iqn.2026-12.io.pistore:target     target-secret-123
 * </pre>
 *
 * <p>An {@code initiator} line is a CHAP name an initiator may log in with and its secret; the one
 * optional {@code target} line is the name and secret this target proves itself with when an
 * initiator asks (mutual CHAP). The secret is the rest of the line after the name, without the
 * spaces around it; secrets are 12 to 255 characters, as RFC 7143 asks. Blank lines and lines
 * starting with {@code #} are skipped. The file is checked as every key file is (mode 0600 or 0400,
 * owned by the user pistore runs as or root). Any line it cannot use, a name twice, or a file
 * without an initiator line is an {@link IllegalArgumentException} naming the file and line.
 *
 * <p>Secrets never appear in messages or {@link #toString}.
 */
public final class IscsiChapSecrets {
    static final int MIN_SECRET = 12;
    static final int MAX_SECRET = 255;

    private final Map<String, String> initiators;
    private final String targetName;
    private final String targetSecret;
    private final String description;

    private IscsiChapSecrets(Map<String, String> initiators, String targetName, String targetSecret, String description) {
        this.initiators = initiators;
        this.targetName = targetName;
        this.targetSecret = targetSecret;
        this.description = description;
    }

    /** One initiator's name and secret, and optionally the target's (both null: one-way CHAP). */
    public static IscsiChapSecrets of(String user, String secret, String targetUser, String targetSecret) {
        if (user == null || user.isEmpty() || !validSecret(secret)) {
            throw new IllegalArgumentException("a CHAP secret must be " + MIN_SECRET + " to " + MAX_SECRET
                    + " characters, with a user name");
        }
        if (targetSecret != null && (!validSecret(targetSecret) || targetUser == null || targetUser.isEmpty())) {
            throw new IllegalArgumentException("a CHAP secret must be " + MIN_SECRET + " to " + MAX_SECRET
                    + " characters, with a user name");
        }
        return new IscsiChapSecrets(Map.of(user, secret), targetSecret == null ? null : targetUser, targetSecret,
                "1 initiator" + (targetSecret == null ? "" : ", mutual"));
    }

    /** Reads and checks a secrets file; one open to group or others is refused. */
    public static IscsiChapSecrets read(Path file) {
        KeyFilePermissions.check(file);
        List<String> lines;
        try {
            lines = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList();
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException("CHAP secrets file " + file + " does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException("CHAP secrets file " + file + " is not readable: " + e.getMessage());
        }
        return parse(lines, file.toString());
    }

    /** Parses the lines of a secrets file; {@code where} names it in messages. */
    public static IscsiChapSecrets parse(List<String> lines, String where) {
        Map<String, String> initiators = new LinkedHashMap<>();
        String targetName = null;
        String targetSecret = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String at = "CHAP secrets file " + where + " line " + (i + 1) + ": ";
            String[] f = line.split("\\s+", 3);
            if (f.length < 3 || !(f[0].equals("initiator") || f[0].equals("target"))) {
                throw new IllegalArgumentException(at + "expected 'initiator NAME SECRET' or 'target NAME SECRET'");
            }
            String secret = f[2].strip();
            if (!validSecret(secret)) {
                throw new IllegalArgumentException(at + "the secret of '" + f[1] + "' has " + secret.length()
                        + " characters; CHAP secrets have " + MIN_SECRET + " to " + MAX_SECRET);
            }
            if (f[0].equals("target")) {
                if (targetName != null) {
                    throw new IllegalArgumentException(at + "a second target line; the target has one name");
                }
                targetName = f[1];
                targetSecret = secret;
            } else if (initiators.putIfAbsent(f[1], secret) != null) {
                throw new IllegalArgumentException(at + "initiator '" + f[1] + "' appears twice");
            }
        }
        if (initiators.isEmpty()) {
            throw new IllegalArgumentException("CHAP secrets file " + where
                    + " has no initiator line (expected 'initiator NAME SECRET')");
        }
        if (targetSecret != null && initiators.containsValue(targetSecret)) {
            throw new IllegalArgumentException("CHAP secrets file " + where
                    + ": the target's secret is also an initiator's; mutual CHAP needs different secrets");
        }
        return new IscsiChapSecrets(Collections.unmodifiableMap(initiators), targetName, targetSecret, where + ", "
                + initiators.size() + (initiators.size() == 1 ? " initiator" : " initiators")
                + (targetSecret == null ? "" : ", mutual"));
    }

    static boolean validSecret(String s) {
        return s != null && s.length() >= MIN_SECRET && s.length() <= MAX_SECRET;
    }

    /** The secret of CHAP name {@code name}, or null. */
    String initiatorSecret(String name) {
        return initiators.get(name);
    }

    /** The target's CHAP name for mutual CHAP, or null. */
    String targetName() {
        return targetName;
    }

    /** The target's secret for mutual CHAP, or null. */
    String targetSecret() {
        return targetSecret;
    }

    /** Whether the target can prove itself (mutual CHAP). */
    public boolean mutual() {
        return targetSecret != null;
    }

    /** One line for a start-up banner: the file and how many initiators, never a secret. */
    @Override
    public String toString() {
        return description;
    }
}
