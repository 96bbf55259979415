package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The psktool key file format: what it accepts, and the one line it says about what it does not. */
class PskKeysTest {
    @TempDir
    Path dir;

    static String message(List<String> lines) {
        return assertThrows(TlsFileException.class, () -> PskKeys.parse(lines, "PSK key file k.psk")).getMessage();
    }

    @Test
    void readsWhatPsktoolWrites() throws Exception {
        Path f = dir.resolve("keys.psk");
        // psktool -u alice -p keys.psk; then -u bob: one IDENTITY:HEX line each, a 32-byte key
        Files.writeString(f, "alice:9c1a7e5b3f0d2c4e6a8b0d1f3e5c7a9b1d3f5e7c9a0b2d4f6e8c0a1b3d5f7e9c\n"
                + "bob:00ff10EE\n");
        Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        PskKeys k = PskKeys.read(f);
        assertEquals(List.of("alice", "bob"), List.copyOf(k.identities()));
        assertArrayEquals(HexFormat.of().parseHex("00ff10ee"), k.key("bob"));
        assertEquals(32, k.key("alice").length);
        assertNull(k.key("carol"));
        assertEquals(f + ", 2 identities", k.toString());
        assertFalse(k.toString().contains("9c1a"), "no key in the banner");
    }

    @Test
    void skipsBlankAndCommentLinesAndKeepsLineNumbers() {
        PskKeys k = PskKeys.parse(List.of("# made by psktool", "", "  alice:0102  "), "f");
        assertArrayEquals(new byte[] {1, 2}, k.key("alice"));
        assertTrue(message(List.of("# comment", "", "alice")).startsWith("PSK key file k.psk line 3: "));
    }

    @Test
    void aReturnedKeyIsACopy() {
        PskKeys k = PskKeys.parse(List.of("alice:0102"), "f");
        k.key("alice")[0] = 9;
        assertArrayEquals(new byte[] {1, 2}, k.key("alice"));
    }

    @Test
    void namesTheMalformedLine() {
        assertEquals("PSK key file k.psk line 2: expected IDENTITY:HEXKEY (as psktool writes)",
                message(List.of("alice:00", "bob 0011")));
    }

    @Test
    void refusesAKeyThatIsNotHex() {
        assertEquals("PSK key file k.psk line 1: the key of identity 'alice' is not hex (an even number of 0-9, a-f)",
                message(List.of("alice:0g")));
        assertEquals("PSK key file k.psk line 1: the key of identity 'alice' is not hex (an even number of 0-9, a-f)",
                message(List.of("alice:abc")));
    }

    @Test
    void refusesAnEmptyKeyOrIdentity() {
        assertEquals("PSK key file k.psk line 1: empty key for identity 'alice'", message(List.of("alice:")));
        assertEquals("PSK key file k.psk line 1: empty identity", message(List.of(":0011")));
    }

    @Test
    void refusesADuplicateIdentity() {
        assertEquals("PSK key file k.psk line 3: identity 'alice' appears twice",
                message(List.of("alice:00", "bob:01", "alice:02")));
    }

    @Test
    void refusesAFileWithoutKeys() {
        assertEquals("PSK key file k.psk has no keys (expected IDENTITY:HEXKEY lines)", message(List.of("# nothing", "")));
    }

    @Test
    void aMissingFileIsOneLine() {
        Path f = dir.resolve("nope.psk");
        TlsFileException e = assertThrows(TlsFileException.class, () -> PskKeys.read(f));
        assertEquals("PSK key file " + f + " does not exist", e.getMessage());
    }

    @Test
    void anUnreadableFileIsOneLine() throws Exception {
        Path f = dir.resolve("keys.psk");
        Files.writeString(f, "alice:00\n");
        Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        assertTrue(f.toFile().setReadable(false));
        try {
            if (Files.isReadable(f)) {
                // root reads anything; a directory in its place is unreadable as a file for everyone
                Files.delete(f);
                Files.createDirectory(f, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
            }
            TlsFileException e = assertThrows(TlsFileException.class, () -> PskKeys.read(f));
            assertTrue(e.getMessage().startsWith("PSK key file " + f + " is not readable"), e.getMessage());
        } finally {
            f.toFile().setReadable(true);
        }
    }
}
