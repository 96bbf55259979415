package io.pistore.app.cli.pi;

import io.pistore.app.cli.CliException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An output written all or nothing: a regular file is written under a temporary name in its own
 * directory and renamed over the target by {@link #commit()}; closing without a commit removes the
 * temporary file, so a failed or refused run leaves no partial output (and the output may be the
 * input file itself). A symbolic link is followed: the file it names is replaced, the link stays. An
 * existing non-regular target (a device, a pipe, {@code /dev/null}) is written in place: it cannot be
 * replaced.
 */
final class OutputFile implements AutoCloseable {
    private final Path target;
    private final Path temp;
    private final FileChannel channel;
    private boolean committed;

    private OutputFile(Path target, Path temp, FileChannel channel) {
        this.target = target;
        this.temp = temp;
        this.channel = channel;
    }

    /**
     * Whether {@code target} is an existing device or pipe (such as {@code /dev/stdout}): written in
     * place, so it cannot be left untouched by a run that fails half way.
     */
    static boolean isStream(Path target) {
        return Files.exists(target) && !Files.isRegularFile(target) && !Files.isDirectory(target);
    }

    static OutputFile create(Path target) {
        try {
            if (Files.exists(target) && !Files.isRegularFile(target)) {
                if (Files.isDirectory(target)) {
                    throw CliException.usage(target + ": is a directory");
                }
                return new OutputFile(target, null, FileChannel.open(target, StandardOpenOption.WRITE));
            }
            // Through symbolic links (such as /dev/stdout redirected to a file): the file is replaced, not the link.
            Path real = Files.exists(target) ? target.toRealPath() : target.toAbsolutePath();
            Path temp = real.resolveSibling("." + real.getFileName() + "."
                    + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".pistore-tmp");
            return new OutputFile(real, temp,
                    FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE));
        } catch (NoSuchFileException e) {
            throw CliException.usage(target + ": cannot create: no such directory");
        } catch (AccessDeniedException e) {
            throw CliException.usage(target + ": cannot create: permission denied");
        } catch (IOException e) {
            throw CliException.usage(target + ": cannot create: " + e.getMessage());
        }
    }

    FileChannel channel() {
        return channel;
    }

    /** Closes the channel and puts the output in place. */
    void commit() throws IOException {
        channel.close();
        if (temp != null) {
            try {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }
        committed = true;
    }

    @Override
    public void close() throws IOException {
        if (committed) {
            return;
        }
        try {
            channel.close();
        } finally {
            if (temp != null) {
                Files.deleteIfExists(temp);
            }
        }
    }
}
