package io.pistore.it.reliability;

import java.io.IOException;

/**
 * One host connection of a crash test, whatever the wire (tcp through {@code BlockDevice}, or NBD):
 * the requests the load sends and the read that checks a block afterwards. Blocks are
 * {@link BlockVersions#BS} bytes. The load methods never throw: a dead server is {@link Ack#FAILED}.
 */
interface CrashHost extends AutoCloseable {
    /** How a request ended, as the host saw it. */
    enum Ack {
        /** The server acknowledged it. */
        DONE,
        /** The host refused it before sending (queue full): it changed nothing. */
        NOT_SENT,
        /** It failed or got no answer: the server is gone (it may or may not have been applied). */
        FAILED
    }

    /** What a read of one block found. */
    record Readback(byte[] data, String piError) {
        static Readback ok(byte[] data) {
            return new Readback(data, null);
        }

        static Readback piError(String why) {
            return new Readback(null, why);
        }

        boolean failed() {
            return piError != null;
        }
    }

    Ack write(long lba, byte[] blocks, boolean fua);

    Ack writeZeroes(long lba, int blocks, boolean fua);

    Ack flush();

    /**
     * Reads one block with every PI check the wire allows. A PI failure (or, over NBD, the EIO that
     * stands for one) is a {@link Readback#piError}; any other failure throws.
     */
    Readback read(long lba) throws IOException;

    @Override
    void close() throws IOException;
}
