package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CHAP secrets file: its lines, its mistakes named with their line, its permissions, no secret in messages. */
class IscsiChapSecretsTest {
    @TempDir
    Path dir;

    @Test
    void linesGiveInitiatorsAndTheTarget() {
        IscsiChapSecrets s = IscsiChapSecrets.parse(List.of("# comment", "", "initiator alice  alice-secret-12",
                "initiator iqn.2026-12.org.example:b   a secret with spaces ", "target iqn.2026-12.io.pistore:t target-secret-123"),
                "f");
        assertEquals("alice-secret-12", s.initiatorSecret("alice"));
        assertEquals("a secret with spaces", s.initiatorSecret("iqn.2026-12.org.example:b"));
        assertNull(s.initiatorSecret("bob"));
        assertEquals("iqn.2026-12.io.pistore:t", s.targetName());
        assertTrue(s.mutual());
        assertEquals("f, 2 initiators, mutual", s.toString());
        assertFalse(IscsiChapSecrets.parse(List.of("initiator alice alice-secret-12"), "f").mutual());
    }

    @Test
    void mistakesNameTheLineAndNeverTheSecret() {
        String tooShort = assertThrows(IllegalArgumentException.class,
                () -> IscsiChapSecrets.parse(List.of("initiator alice short-one"), "f")).getMessage();
        assertEquals("CHAP secrets file f line 1: the secret of 'alice' has 9 characters; CHAP secrets have 12 to 255",
                tooShort);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IscsiChapSecrets.parse(
                List.of("user alice alice-secret-12"), "f")).getMessage().contains("line 1: expected 'initiator NAME SECRET'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IscsiChapSecrets.parse(
                List.of("initiator alice alice-secret-12", "initiator alice alice-secret-34"), "f")).getMessage()
                .contains("line 2: initiator 'alice' appears twice"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IscsiChapSecrets.parse(
                List.of("target t target-secret-123"), "f")).getMessage().contains("has no initiator line"));
        String same = assertThrows(IllegalArgumentException.class, () -> IscsiChapSecrets.parse(
                List.of("initiator a same-secret-123", "target t same-secret-123"), "f")).getMessage();
        assertTrue(same.contains("mutual CHAP needs different secrets"), same);
        assertFalse(same.contains("same-secret-123"), same);
    }

    @Test
    void aFileOpenToOthersIsRefused() throws Exception {
        Path f = dir.resolve("chap");
        Files.writeString(f, "initiator alice alice-secret-12\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        String m = assertThrows(IllegalArgumentException.class, () -> IscsiChapSecrets.read(f)).getMessage();
        assertTrue(m.contains("is readable by others (0644): chmod 600"), m);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        assertEquals("alice-secret-12", IscsiChapSecrets.read(f).initiatorSecret("alice"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IscsiChapSecrets.read(dir.resolve("none")))
                .getMessage().contains("does not exist"));
    }
}
