package io.pistore.app.cli.pi;

import io.pistore.app.cli.CliException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Opening inputs with one-line reasons, and whole reads and writes on channels. */
final class BlockFiles {
    private BlockFiles() {
    }

    /** Opens a file to read; a missing, unreadable or directory path is a usage error. */
    static FileChannel openInput(Path p) {
        if (Files.isDirectory(p)) {
            throw CliException.usage(p + ": is a directory");
        }
        try {
            return FileChannel.open(p, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw CliException.usage(p + ": no such file");
        } catch (AccessDeniedException e) {
            throw CliException.usage(p + ": permission denied");
        } catch (IOException e) {
            throw CliException.usage(p + ": cannot open: " + e.getMessage());
        }
    }

    /** The size of a regular file, or -1 for anything else (a pipe, a device): those are read to their end. */
    static long regularSize(Path p) throws IOException {
        return Files.isRegularFile(p) ? Files.size(p) : -1;
    }

    /** A size that must be a whole number of {@code unit}-byte blocks (unknown sizes, -1, pass). */
    static void requireWholeBlocks(Path p, long size, int unit) {
        if (size >= 0 && size % unit != 0) {
            throw CliException.usage(p + ": " + size + " bytes is not a whole number of " + unit + "-byte blocks");
        }
    }

    /** Reads until {@code b} is full or the channel ends; returns the bytes read (fewer only at the end). */
    static int readFully(ReadableByteChannel ch, ByteBuffer b) throws IOException {
        int start = b.position();
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                break;
            }
        }
        return b.position() - start;
    }

    /** Writes all of {@code [position, limit)} of {@code b}. */
    static void writeFully(WritableByteChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
