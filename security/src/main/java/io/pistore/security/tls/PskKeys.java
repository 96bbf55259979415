package io.pistore.security.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pre-shared keys a TLS-PSK server accepts, from a key file in the format GnuTLS's
 * {@code psktool} writes and libnbd's {@code tls-psk-file} and qemu's {@code tls-creds-psk} read:
 * one {@code IDENTITY:HEXKEY} a line. Blank lines and lines starting with {@code #} are skipped.
 * Loaded and checked once, when a server is configured: an unreadable file, a line without a
 * colon or with a key that is not hex, an empty identity or key, the same identity twice, or a file
 * with no key at all is a {@link TlsFileException} naming the file and line.
 *
 * <p>The keys never appear in messages or {@link #toString}.
 */
public final class PskKeys {
    private final Map<String, byte[]> keys;
    private final String description;

    private PskKeys(Map<String, byte[]> keys, String description) {
        this.keys = keys;
        this.description = description;
    }

    /** Reads and checks a key file; one open to group or others is refused ({@link KeyFilePermissions}). */
    public static PskKeys read(Path file) {
        KeyFilePermissions.check(file);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new TlsFileException("PSK key file " + file + " does not exist");
        } catch (java.nio.file.AccessDeniedException e) {
            throw new TlsFileException("PSK key file " + file + " is not readable (permission denied)");
        } catch (IOException e) {
            throw new TlsFileException("PSK key file " + file + " is not readable: " + e.getMessage());
        }
        return parse(new String(bytes, StandardCharsets.UTF_8).lines().toList(), "PSK key file " + file);
    }

    /** Parses key file lines; {@code where} starts every message (for example "PSK key file keys.psk"). */
    public static PskKeys parse(List<String> lines, String where) {
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String at = where + " line " + (i + 1) + ": ";
            int colon = line.indexOf(':');
            if (colon < 0) {
                throw new TlsFileException(at + "expected IDENTITY:HEXKEY (as psktool writes)");
            }
            String identity = line.substring(0, colon);
            String hex = line.substring(colon + 1).strip();
            if (identity.isEmpty()) {
                throw new TlsFileException(at + "empty identity");
            }
            if (hex.isEmpty()) {
                throw new TlsFileException(at + "empty key for identity '" + identity + "'");
            }
            byte[] key;
            try {
                key = HexFormat.of().parseHex(hex);
            } catch (IllegalArgumentException e) {
                throw new TlsFileException(at + "the key of identity '" + identity
                        + "' is not hex (an even number of 0-9, a-f)");
            }
            if (keys.putIfAbsent(identity, key) != null) {
                throw new TlsFileException(at + "identity '" + identity + "' appears twice");
            }
        }
        if (keys.isEmpty()) {
            throw new TlsFileException(where + " has no keys (expected IDENTITY:HEXKEY lines)");
        }
        return new PskKeys(Collections.unmodifiableMap(keys), where.replaceFirst("^PSK key file ", "") + ", "
                + keys.size() + (keys.size() == 1 ? " identity" : " identities"));
    }

    /** The key of {@code identity} (a copy), or null when the file has none. */
    public byte[] key(String identity) {
        byte[] k = keys.get(identity);
        return k == null ? null : k.clone();
    }

    /** The identities, in file order. */
    public Set<String> identities() {
        return keys.keySet();
    }

    /** One line for a start-up banner: the file and how many identities, never a key. */
    @Override
    public String toString() {
        return description;
    }
}
