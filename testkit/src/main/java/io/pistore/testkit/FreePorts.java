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
 * (20000-32767), at random, never twice in one JVM, and were bindable when picked.
 */
public final class FreePorts {
    private static final int LOW = 20_000;
    private static final int HIGH = 32_768; // Linux's default ip_local_port_range starts here
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    /** A port on 127.0.0.1 nothing listened on when picked, not given out before by this JVM. */
    public static int next() {
        for (int tries = 0; tries < 1000; tries++) {
            int p = ThreadLocalRandom.current().nextInt(LOW, HIGH);
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
        throw new UncheckedIOException(new IOException("no free port in " + LOW + "-" + (HIGH - 1) + " after 1000 tries"));
    }
}
