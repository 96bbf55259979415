package io.pistore.security.tls;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.util.Set;

/**
 * The rule sshd and PostgreSQL apply to a private key, checked on every key file pistore loads (a
 * TLS private key, a file of pre-shared keys, the iSCSI CHAP secrets) before it is read: no access for group or others
 * (mode {@code 0600} or {@code 0400}), and owned by the user pistore runs as or by root. A file that
 * breaks it is refused with one line that names the fix. Nothing is checked on a file system without
 * POSIX permissions.
 */
public final class KeyFilePermissions {
    private KeyFilePermissions() {
    }

    /** Throws {@link TlsFileException} when {@code file} may be read or changed by others than its user. */
    public static void check(Path file) {
        PosixFileAttributes a;
        try {
            PosixFileAttributeView v = Files.getFileAttributeView(file, PosixFileAttributeView.class);
            if (v == null) {
                return;
            }
            a = v.readAttributes();
        } catch (IOException | UnsupportedOperationException e) {
            return; // missing or unreadable: reading it says so, in the loader's words
        }
        Set<PosixFilePermission> perms = a.permissions();
        String mode = octal(perms);
        if (perms.contains(PosixFilePermission.OTHERS_READ)) {
            throw new TlsFileException(file + " is readable by others (" + mode + "): chmod 600 " + file);
        }
        if (perms.contains(PosixFilePermission.GROUP_READ)) {
            throw new TlsFileException(file + " is readable by its group (" + mode + "): chmod 600 " + file);
        }
        for (PosixFilePermission p : perms) {
            if (!p.name().startsWith("OWNER_")) {
                throw new TlsFileException(file + " is open to group or others (" + mode + "): chmod 600 " + file);
            }
        }
        UserPrincipal owner = a.owner();
        UserPrincipal self = self();
        if (self != null && !owner.equals(self) && !owner.getName().equals("root")) {
            throw new TlsFileException(file + " is owned by " + owner.getName() + ", not by " + self.getName()
                    + " (who runs pistore) or root: chown " + self.getName() + " " + file);
        }
    }

    /** The user this process runs as (the owner of its /proc entry), or null where that cannot be told. */
    private static UserPrincipal self() {
        try {
            Path proc = Path.of("/proc/self");
            if (Files.exists(proc)) {
                return Files.getOwner(proc); // the link's target, /proc/PID, belongs to the effective user
            }
            return FileSystems.getDefault().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String octal(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) {
            m |= 1 << (8 - p.ordinal());
        }
        return String.format("%04o", m);
    }
}
