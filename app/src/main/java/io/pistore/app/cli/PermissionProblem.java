package io.pistore.app.cli;

import io.pistore.engine.volume.PrivateFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.List;

/**
 * Files pistore may not use, said as such: a path this process has no permission for is a
 * permission problem with the path, the mode and owner of what stops it, and the user pistore runs
 * as (never "no such file"); and the check of {@code serve --strict-permissions}.
 */
public final class PermissionProblem {
    private PermissionProblem() {
    }

    /**
     * One line for {@code path}, which this process may not read, write or enter: the path, then the
     * mode and owner of the nearest part of it whose attributes can be read (the file itself, or the
     * directory that cannot be entered), and who pistore runs as.
     */
    static String describe(Path path) {
        Path abs = path.toAbsolutePath();
        for (Path p = abs; p != null; p = p.getParent()) {
            try {
                PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                String where = p.equals(abs) ? "" : p + " is ";
                return path + ": permission denied (" + where + "mode " + PrivateFiles.octal(a.permissions())
                        + ", owner " + a.owner().getName() + "; pistore runs as " + System.getProperty("user.name") + ")";
            } catch (IOException | UnsupportedOperationException e) {
                // not visible from here either: the part above is what stops this process
            }
        }
        return path + ": permission denied";
    }

    /**
     * Whether {@code dir} cannot be told to exist or not because a directory on the way may not be
     * entered (its attributes cannot be read for lack of permission).
     */
    static boolean hidden(Path dir) {
        try {
            Files.readAttributes(dir, PosixFileAttributes.class);
            return false;
        } catch (java.nio.file.AccessDeniedException e) {
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Whether this process may list and enter {@code dir}, an existing directory. */
    static boolean usable(Path dir) {
        return Files.isReadable(dir) && Files.isExecutable(dir);
    }

    /**
     * {@code serve --strict-permissions}: a usage error (one line) when the data directory or a
     * volume's files give group or others access.
     */
    public static void requirePrivate(Path dir) {
        List<String> open = PrivateFiles.warnings(dir);
        if (!open.isEmpty()) {
            throw CliException.usage("--strict-permissions: " + open.get(0)
                    + (open.size() > 1 ? " (and " + (open.size() - 1) + " more such line(s) without the option)" : ""));
        }
    }
}
