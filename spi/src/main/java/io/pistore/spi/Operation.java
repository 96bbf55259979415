package io.pistore.spi;

/** The operation of a block request. */
public enum Operation {
    READ, WRITE, FLUSH, WRITE_ZEROES, DEALLOCATE;

    /** Whether the request moves data from host to target. */
    public boolean carriesDataToTarget() {
        return this == WRITE;
    }

    /** Whether the request moves data from target to host. */
    public boolean carriesDataToHost() {
        return this == READ;
    }
}
