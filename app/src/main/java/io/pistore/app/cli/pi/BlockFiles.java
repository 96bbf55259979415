package io.pistore.app.cli.pi;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.Progress;
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

/** Opening inputs with one-line reasons, whole reads and writes on channels, and reading a file block by block. */
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

    /** What is done with one chunk of whole blocks. */
    interface Chunk {
        /** {@code blocks} blocks lie in {@code buf} (flipped); the first of them is block {@code first} of the file. */
        void accept(ByteBuffer buf, int blocks, long first) throws IOException;
    }

    /**
     * Reads {@code ch} (the file {@code p}) to its end in chunks of whole {@code unit}-byte blocks, as many as
     * {@code buf} holds, and hands each to {@code chunk}, advancing {@code progress} by its bytes. A file that
     * ends with a partial block is a usage error. Returns the blocks read.
     */
    static long readBlocks(ReadableByteChannel ch, Path p, ByteBuffer buf, int unit, Progress progress, Chunk chunk)
            throws IOException {
        long done = 0;
        for (;;) {
            buf.clear();
            int got = readFully(ch, buf);
            if (got == 0) {
                return done;
            }
            if (got % unit != 0) {
                throw CliException.usage(p + ": ends with a partial block (" + (done * unit + got)
                        + " bytes is not a whole number of " + unit + "-byte blocks)");
            }
            int k = got / unit;
            buf.flip();
            chunk.accept(buf, k, done);
            done += k;
            progress.advance(got);
            if (got < buf.capacity()) {
                return done;
            }
        }
    }
}
