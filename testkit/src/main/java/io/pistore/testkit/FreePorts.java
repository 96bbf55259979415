package io.pistore.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A loopback port for a server a test starts later (a process told its address up front).
 *
 * <p>Not an ephemeral port ({@code new ServerSocket(0)}): Linux hands the same range out as the
 * source port of outgoing connections, so between the test's pick and the server's bind another
 * test JVM's client can take it ("Address already in use"). These come from below that range
 * (20000-32767), at random, never twice in one JVM, and were bindable when picked. The test JVMs
 * that Maven runs side by side for one module each take a quarter of that range (by
 * {@code pistore.test.fork}, surefire's fork number), so two of them never pick the same port.
 */
public final class FreePorts {
    private static final int LOW = 20_000;
    private static final int HIGH = 32_768; // Linux's default ip_local_port_range starts here
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();
    /** This JVM's part of the range: [{@link #low}, {@link #high}). */
    private static final int[] RANGE = range(System.getProperty("pistore.test.fork"));

    private FreePorts() {
    }

    /** A port on 127.0.0.1 nothing listened on when picked, not given out before by this JVM. */
    public static int next() {
        for (int tries = 0; tries < 1000; tries++) {
            int p = ThreadLocalRandom.current().nextInt(RANGE[0], RANGE[1]);
            if (!GIVEN.add(p)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), p));
                return p;
            } catch (IOException e) {
                // in use: the next one
            }
        }
        throw new UncheckedIOException(new IOException("no free port in " + RANGE[0] + "-" + (RANGE[1] - 1)
                + " after 1000 tries"));
    }

    /** The part of the range of test JVM number {@code fork} (1, 2, ...): a quarter; the whole without a number. */
    static int[] range(String fork) {
        int n;
        try {
            n = Integer.parseInt(fork == null ? "" : fork.trim());
        } catch (NumberFormatException e) {
            return new int[] {LOW, HIGH};
        }
        if (n < 1) {
            return new int[] {LOW, HIGH};
        }
        int width = (HIGH - LOW) / 4;
        int low = LOW + ((n - 1) % 4) * width;
        return new int[] {low, low + width};
    }
}
