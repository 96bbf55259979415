package io.pistore.spi;

/** A listening target endpoint; closing it stops accepting and closes its connections. */
public interface TargetListener extends AutoCloseable {
    /** Where hosts connect, e.g. {@code 127.0.0.1:4420}, or a name for in-process transports. */
    String address();

    @Override
    void close();
}
