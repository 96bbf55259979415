package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A private key or a pre-shared key file that others may read is refused where it is loaded, with
 * one line naming the fix, as sshd and PostgreSQL refuse one; so is one owned by another user.
 */
class KeyFilePermissionsTest {
    @TempDir
    Path dir;
    private Path cert;
    private Path key;
    private Path psk;

    @BeforeEach
    void files() throws Exception {
        Path[] made = SelfSigned.create(dir);
        cert = made[0];
        key = made[1];
        psk = dir.resolve("keys.psk");
        Files.writeString(psk, "alice:00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(psk, PosixFilePermissions.fromString("rw-------"));
    }

    private static void chmod(Path p, String mode) throws Exception {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
    }

    @Test
    void aPrivateKeyIsLoaded() {
        assertNotNull(TlsContext.server(cert, key, null, false, TlsEngine.JDK));
        assertNotNull(PskKeys.read(psk));
    }

    @Test
    void aKeyReadableByOthersStopsWithTheFix() throws Exception {
        chmod(key, "rw-r--r--");
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(cert, key, null, false, TlsEngine.JDK));
        assertEquals(key + " is readable by others (0644): chmod 600 " + key, e.getMessage());
        e = assertThrows(TlsFileException.class, () -> TlsContext.client(null, cert, key, TlsEngine.JDK));
        assertEquals(key + " is readable by others (0644): chmod 600 " + key, e.getMessage(),
                "a client's key too");
        chmod(key, "rw-r-----");
        e = assertThrows(TlsFileException.class, () -> TlsContext.server(cert, key, null, false, TlsEngine.JDK));
        assertEquals(key + " is readable by its group (0640): chmod 600 " + key, e.getMessage());
        chmod(key, "rw-----w-");
        e = assertThrows(TlsFileException.class, () -> TlsContext.server(cert, key, null, false, TlsEngine.JDK));
        assertEquals(key + " is open to group or others (0602): chmod 600 " + key, e.getMessage());
        chmod(key, "r--------");
        assertNotNull(TlsContext.server(cert, key, null, false, TlsEngine.JDK), "0400 is as private as 0600");
    }

    @Test
    void aPreSharedKeyFileReadableByOthersStopsWithTheFix() throws Exception {
        chmod(psk, "rw-r--r--");
        TlsFileException e = assertThrows(TlsFileException.class, () -> PskKeys.read(psk));
        assertEquals(psk + " is readable by others (0644): chmod 600 " + psk, e.getMessage());
    }

    @Test
    void aKeyOwnedByAnotherUserIsRefused() throws Exception {
        UserPrincipal nobody;
        try {
            nobody = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        } catch (java.io.IOException e) {
            nobody = null;
        }
        assumeTrue(nobody != null, "skipped: there is no user nobody here");
        UserPrincipal self = Files.getOwner(key);
        assumeTrue(!self.equals(nobody), "skipped: the tests run as nobody");
        try {
            Files.setOwner(key, nobody);
        } catch (java.io.IOException e) {
            assumeTrue(false, "skipped: giving a file to nobody needs root (" + e.getMessage() + ")");
        }
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(cert, key, null, false, TlsEngine.JDK));
        assertEquals(key + " is owned by nobody, not by " + self.getName() + " (who runs pistore) or root: chown "
                + self.getName() + " " + key, e.getMessage());
    }
}
