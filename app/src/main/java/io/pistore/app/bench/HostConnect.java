package io.pistore.app.bench;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * A host's first connection, which may wait a stated time for a target that is still starting: it
 * tries again every 100 ms while connecting fails with an I/O error, until {@code timeoutMillis}
 * has passed; then one I/O error names the target, the time and the last reason.
 */
public final class HostConnect {
    /** The pause between two attempts. */
    public static final long RETRY_MILLIS = 100;

    private HostConnect() {
    }

    public static HostConnection connect(BlockTransport t, String address, ConnectOptions o, long timeoutMillis)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            try {
                return t.connect(address, o);
            } catch (IOException e) {
                if (timeoutMillis <= 0) {
                    throw e;
                }
                if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS) > deadline) {
                    throw new IOException(e.getMessage() + " (tried for " + seconds(timeoutMillis) + ", every "
                            + RETRY_MILLIS + " ms)", e);
                }
                Thread.sleep(RETRY_MILLIS);
            }
        }
    }

    private static String seconds(long millis) {
        return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
    }
}
