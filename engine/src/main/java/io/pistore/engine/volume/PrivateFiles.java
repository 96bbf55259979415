package io.pistore.engine.volume;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Files and directories only their owner can use: every directory pistore makes is {@code 0700}
 * and every file {@code 0600}, whatever the process umask (the mode is given at creation, so the
 * file is never open to others, and then set exactly, since a umask may also take bits from the
 * owner). On a file system without POSIX permissions (none to set) files are made as the system
 * makes them. Also reads how open existing files are, for the warnings of an older data directory.
 */
public final class PrivateFiles {
    /** {@code rw-------}. */
    public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
    /** {@code rwx------}. */
    public static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwx------");

    private static final Set<PosixFilePermission> GROUP_OR_OTHERS = Set.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    /** The suffixes of a volume's files in a data directory. */
    private static final List<String> VOLUME_SUFFIXES = List.of(".data", ".meta", ".journal", ".volume",
            VolumeStore.RESERVATIONS_SUFFIX);

    private PrivateFiles() {
    }

    /** Whether {@code p}'s file system has POSIX permissions. */
    public static boolean posix(Path p) {
        Path abs = p.toAbsolutePath();
        return abs.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /**
     * Makes {@code dir} and its missing parents, each one made here {@code 0700}; existing ones are
     * left as they are.
     */
    public static Path createDirectories(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath();
        if (Files.isDirectory(abs)) {
            return dir;
        }
        if (!posix(abs)) {
            Files.createDirectories(abs);
            return dir;
        }
        List<Path> missing = new ArrayList<>();
        for (Path p = abs; p != null && !Files.exists(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
            missing.add(0, p);
        }
        for (Path p : missing) {
            try {
                Files.createDirectory(p, PosixFilePermissions.asFileAttribute(DIRECTORY));
                Files.setPosixFilePermissions(p, DIRECTORY);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p)) {
                    throw e;
                }
            }
        }
        return dir;
    }

    /**
     * Opens {@code file} with {@code options}; a file this call creates is {@code 0600}. Only
     * {@code CREATE_NEW} tells for sure that the file is new; with {@code CREATE} the mode is set
     * when the file did not exist just before.
     */
    public static FileChannel open(Path file, OpenOption... options) throws IOException {
        if (!posix(file)) {
            return FileChannel.open(file, options);
        }
        Set<OpenOption> o = new HashSet<>(Arrays.asList(options));
        boolean createNew = o.contains(StandardOpenOption.CREATE_NEW);
        boolean mayCreate = createNew || o.contains(StandardOpenOption.CREATE) && !Files.exists(file);
        FileChannel c = FileChannel.open(file, o, PosixFilePermissions.asFileAttribute(FILE));
        if (mayCreate) {
            try {
                Files.setPosixFilePermissions(file, FILE);
            } catch (IOException | RuntimeException e) {
                try {
                    c.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }
        return c;
    }

    /** Writes {@code bytes} to a new or truncated file {@code file}, made {@code 0600} if new. */
    public static void write(Path file, byte[] bytes) throws IOException {
        write(file, bytes, false);
    }

    /** {@link #write}, then forces the file's content to the device before it returns. */
    public static void writeForced(Path file, byte[] bytes) throws IOException {
        write(file, bytes, true);
    }

    private static void write(Path file, byte[] bytes, boolean force) throws IOException {
        try (FileChannel c = open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                c.write(b);
            }
            if (force) {
                c.force(true);
            }
        }
    }

    /**
     * Sets every directory under {@code root} (itself included) {@code 0700} and every regular file
     * {@code 0600}: for the trees a library makes with the umask's modes (Ratis's log directories).
     * Symbolic links are not followed; what goes away meanwhile is skipped. Nothing happens without
     * POSIX permissions.
     */
    public static void tighten(Path root) throws IOException {
        if (!Files.exists(root) || !posix(root)) {
            return;
        }
        Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<>() {
            @Override
            public java.nio.file.FileVisitResult preVisitDirectory(Path d,
                    java.nio.file.attribute.BasicFileAttributes a) throws IOException {
                set(d, DIRECTORY);
                return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFile(Path f, java.nio.file.attribute.BasicFileAttributes a)
                    throws IOException {
                if (a.isRegularFile()) {
                    set(f, FILE);
                }
                return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return java.nio.file.FileVisitResult.CONTINUE; // removed while walking: nothing to protect
                }
                throw e;
            }

            private void set(Path p, Set<PosixFilePermission> mode) throws IOException {
                try {
                    Files.setPosixFilePermissions(p, mode);
                } catch (NoSuchFileException gone) {
                    // removed while walking (a log segment rolled, a snapshot purged)
                }
            }
        });
    }

    /** The mode of {@code p} in octal ({@code 0644}), or null where it has none to read. */
    public static String mode(Path p) {
        try {
            PosixFileAttributeView v = Files.getFileAttributeView(p, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
            return v == null ? null : octal(v.readAttributes().permissions());
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** {@code perms} as four octal digits. */
    public static String octal(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) {
            m |= 1 << (8 - p.ordinal());
        }
        return String.format("%04o", m);
    }

    /** Whether {@code p} gives its group or others any access; false where there are no POSIX modes. */
    public static boolean openToOthers(Path p) {
        try {
            PosixFileAttributeView v = Files.getFileAttributeView(p, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
            if (v == null) {
                return false;
            }
            Set<PosixFilePermission> perms = v.readAttributes().permissions();
            return perms.stream().anyMatch(GROUP_OR_OTHERS::contains);
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * The line that warns of a data directory open to its group or others, with the fix; null when
     * it is private.
     */
    public static String directoryWarning(Path dir) {
        if (!openToOthers(dir)) {
            return null;
        }
        return "data directory " + dir + " is open to group or others (" + mode(dir) + "): chmod 700 " + dir;
    }

    /**
     * The files of volume {@code name} in {@code dir} that give group or others access, each as
     * {@code FILE MODE}; empty when all are private.
     */
    public static List<String> openVolumeFiles(Path dir, String name) {
        List<String> open = new ArrayList<>();
        for (String suffix : VOLUME_SUFFIXES) {
            Path f = dir.resolve(name + suffix);
            if (Files.exists(f, LinkOption.NOFOLLOW_LINKS) && openToOthers(f)) {
                open.add(f.getFileName() + " " + mode(f));
            }
        }
        return open;
    }

    /**
     * One line for volume {@code name} whose files give group or others access, with the fix; null
     * when they are private.
     */
    public static String volumeWarning(Path dir, String name) {
        List<String> open = openVolumeFiles(dir, name);
        if (open.isEmpty()) {
            return null;
        }
        return "volume " + name + ": files readable by group or others (" + String.join(", ", open) + "): chmod 600 "
                + dir.resolve(name) + ".*";
    }

    /** The warnings of {@code dir}: itself, then each volume (by its manifest) with open files. */
    public static List<String> warnings(Path dir) {
        List<String> lines = new ArrayList<>();
        String d = directoryWarning(dir);
        if (d != null) {
            lines.add(d);
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.volume")) {
            List<String> names = new ArrayList<>();
            for (Path m : ds) {
                String f = m.getFileName().toString();
                names.add(f.substring(0, f.length() - ".volume".length()));
            }
            names.sort(null);
            for (String n : names) {
                String w = volumeWarning(dir, n);
                if (w != null) {
                    lines.add(w);
                }
            }
        } catch (IOException e) {
            // unreadable: opening the directory reports that itself
        }
        return lines;
    }
}
