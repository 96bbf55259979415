package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.iscsi.IscsiTestInitiator;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.FreePorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Three {@code serve --iscsi} peers of one replicated volume, {@code rv} (64 KiB of 512+8 blocks),
 * each in {@code DIR/d1} to {@code d3} with its own replication and iSCSI port on loopback: what the
 * tests of replicated volumes over iSCSI start. Closing stops the peers still running, each with
 * exit code 0.
 */
final class ReplicatedIscsiPeers implements AutoCloseable {
    private final ServeThread[] serves = new ServeThread[3];
    private final int[] portals = new int[3];

    /** Creates the volume on three peers in {@code dir} and serves it; {@code name} tells the tests' local listeners apart. */
    ReplicatedIscsiPeers(Path dir, String name) throws Exception {
        StringBuilder peers = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            peers.append(i == 1 ? "" : ",").append("n").append(i).append("=127.0.0.1:").append(FreePorts.next());
            portals[i - 1] = FreePorts.next();
        }
        for (int i = 1; i <= 3; i++) {
            EngineCommandsTest.Result c = EngineCommandsTest.run("volume", "create", "--data", dir.resolve("d" + i).toString(),
                    "rv", "--size", "64KiB", "--format", "512+8", "--replica-id", "n" + i, "--replicas", peers.toString());
            assertEquals(0, c.code(), c.err());
        }
        for (int i = 1; i <= 3; i++) {
            serves[i - 1] = new ServeThread("serve", "--data", dir.resolve("d" + i).toString(), "--replica-id", "n" + i,
                    "--replica-listen", peers.toString().split(",")[i - 1].substring(3),
                    "--transport", "local", "--listen", name + "-" + i, "--iscsi", "127.0.0.1:" + portals[i - 1]);
        }
        for (ServeThread s : serves) {
            s.awaitOutput(o -> o.contains("pistore serve: iSCSI on "));
        }
    }

    /**
     * REPORT TARGET PORT GROUPS, length-only format: group number to asymmetric access state; null
     * when answered with a unit attention (taken: ask again).
     */
    static Map<Integer, Integer> groups(IscsiTestInitiator c) throws IOException {
        byte[] cdb = new byte[12];
        cdb[0] = (byte) 0xA3;
        cdb[1] = 0x0A;
        cdb[9] = (byte) 255;
        IscsiTestInitiator.Result r = c.command(cdb, new byte[0], 0, 255, true);
        if (r.status() != 0) {
            return null;
        }
        byte[] d = r.dataIn();
        Map<Integer, Integer> g = new LinkedHashMap<>();
        for (int o = 4; o < d.length; o += 8 + 4 * (d[o + 7] & 0xff)) {
            g.put((d[o + 2] & 0xff) << 8 | d[o + 3] & 0xff, d[o] & 0x0f);
        }
        return g;
    }

    /**
     * Waits until every peer reports one group active/optimized (the group has a leader every peer
     * knows) and has reported the same for three of the server's looks at the groups (100 ms apart):
     * the change is then every session's unit attention already, not one a session logging in now
     * would meet.
     */
    void awaitLeader() throws IOException {
        for (int i = 0; i < 3; i++) {
            try (IscsiTestInitiator c = new IscsiTestInitiator(portal(i), IscsiServer.targetName("rv"))) {
                java.util.function.Supplier<Map<Integer, Integer>> look = () -> {
                    try {
                        return groups(c);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                };
                Eventually.await("peer " + (i + 1) + " to know the leader", () -> {
                    Map<Integer, Integer> g = look.get();
                    return g != null && g.size() == 3 && g.values().stream().filter(x -> x == 0).count() == 1;
                });
                Eventually.steady("peer " + (i + 1) + "'s groups to settle", java.time.Duration.ofMillis(300),
                        Eventually.PATIENCE, look);
            }
        }
    }

    /**
     * Sends the command (a write of {@code data}, or a read of one block) until it is not answered
     * with a unit attention, as an initiator does with the state changes it is told of.
     */
    static IscsiTestInitiator.Result settled(IscsiTestInitiator c, byte[] cdb, byte[] data, boolean read)
            throws IOException {
        return settled(c, cdb, data, read ? 512 : -1);
    }

    /** {@link #settled(IscsiTestInitiator, byte[], byte[], boolean)}: a read of {@code readBytes}, or with -1 a write. */
    static IscsiTestInitiator.Result settled(IscsiTestInitiator c, byte[] cdb, byte[] data, int readBytes) throws IOException {
        boolean read = readBytes >= 0;
        for (int i = 0; i < 8; i++) {
            IscsiTestInitiator.Result r = read ? c.command(cdb, new byte[0], 0, readBytes, true)
                    : c.command(cdb, data, data.length, data.length, false);
            if (r.status() == 0 || r.senseKey() != 0x06) {
                return r;
            }
        }
        throw new AssertionError("eight unit attentions in a row");
    }

    /** Peer {@code i}'s iSCSI portal (0 to 2). */
    InetSocketAddress portal(int i) {
        return new InetSocketAddress("127.0.0.1", portals[i]);
    }

    /** Stops peer {@code i} (0 to 2), which must exit with code 0. */
    void stop(int i) throws InterruptedException {
        assertEquals(0, serves[i].stop(), serves[i].err());
        serves[i] = null;
    }

    /** Closes {@code sessions} (a peer may have stopped under one), then the peers. */
    void close(java.util.List<IscsiTestInitiator> sessions) throws InterruptedException {
        for (IscsiTestInitiator s : sessions) {
            try {
                s.close();
            } catch (IOException ignored) {
                // its peer has stopped
            }
        }
        close();
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            if (serves[i] != null) {
                ServeThread s = serves[i];
                serves[i] = null;
                assertEquals(0, s.stop(), s.out() + " / " + s.err());
            }
        }
    }
}
