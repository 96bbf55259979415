package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.iscsi.IscsiTestInitiator;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated volume served over iSCSI by its three peers, as a multipath initiator sees it: the
 * same logical unit (one NAA designator) behind three ports, each its own target port group, every
 * peer reporting the same groups with the leader's alone active/optimized; SET TARGET PORT GROUPS
 * sent down a path that forwards makes that path's peer the leader; once the leader stops,
 * the other peers' sessions get ASYMMETRIC ACCESS STATE CHANGED and report the new leader, and a
 * write through a path that forwards is read back through the new leader's.
 */
@Timeout(180)
class ReplicatedIscsiPortGroupsTest {
    @TempDir
    Path dir;

    private static final String TARGET = IscsiServer.targetName("rv");

    /** The device identification page: {NAA designator as a long, relative target port, target port group}. */
    private static long[] identity(IscsiTestInitiator c) throws IOException {
        IscsiTestInitiator.Result r = c.command(new byte[] {0x12, 0x01, (byte) 0x83, 0x01, 0x00, 0x00}, new byte[0],
                0, 256, true);
        assertEquals(0, r.status());
        byte[] d = r.dataIn();
        long[] id = {-1, -1, -1};
        for (int o = 4; o < d.length; o += 4 + (d[o + 3] & 0xff)) {
            int type = d[o + 1] & 0x0f;
            if (type == 3) {
                id[0] = ByteBuffer.wrap(d, o + 4, 8).getLong();
            } else if (type == 4 || type == 5) {
                id[type - 3] = (d[o + 6] & 0xff) << 8 | d[o + 7] & 0xff;
            }
        }
        return id;
    }

    private static Map<Integer, Integer> awaitGroups(IscsiTestInitiator c, String what,
            java.util.function.Predicate<Map<Integer, Integer>> ok) {
        Map<Integer, Integer>[] got = new Map[1];
        Eventually.await(what, () -> {
            try {
                got[0] = ReplicatedIscsiPeers.groups(c);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return got[0] != null && ok.test(got[0]);
        });
        return got[0];
    }

    private static long optimized(Map<Integer, Integer> g) {
        return g.values().stream().filter(s -> s == 0).count();
    }

    @Test
    void threePeersAreThreePortGroupsOfOneUnitAndTheGroupsFollowTheLeader() throws Exception {
        List<IscsiTestInitiator> sessions = new ArrayList<>();
        ReplicatedIscsiPeers peers = new ReplicatedIscsiPeers(dir, "replicated-iscsi");
        try {
            for (int i = 0; i < 3; i++) {
                sessions.add(new IscsiTestInitiator(peers.portal(i), TARGET));
            }
            Map<Integer, Integer> first = awaitGroups(sessions.get(0), "one leader",
                    g -> g.size() == 3 && optimized(g) == 1);
            Set<Long> naa = new HashSet<>();
            Set<Long> ownGroups = new HashSet<>();
            int leader = -1;
            for (int i = 0; i < 3; i++) {
                IscsiTestInitiator s = sessions.get(i);
                Map<Integer, Integer> g = awaitGroups(s, "peer " + (i + 1) + " to know the leader",
                        x -> x.size() == 3 && optimized(x) == 1);
                assertEquals(first, g, "every peer reports the same groups and states");
                long[] id = identity(s);
                naa.add(id[0]);
                assertEquals(id[1], id[2], "the port is numbered as its group");
                assertTrue(g.containsKey((int) id[2]), "peer " + (i + 1) + "'s group is among the reported: " + g);
                ownGroups.add(id[2]);
                if (g.get((int) id[2]) == 0) {
                    leader = i;
                }
            }
            assertEquals(1, naa.size(), "one logical unit behind every port: " + naa);
            assertEquals(3, ownGroups.size(), "a group per peer");
            assertTrue(leader >= 0, "the optimized group is a peer's own: " + first);

            // explicit ALUA: a peer that forwards asks for its own group to be active/optimized, and leads
            int asker = (leader + 1) % 3;
            int askerGroup = (int) identity(sessions.get(asker))[2];
            byte[] stpg = new byte[12];
            stpg[0] = (byte) 0xA4;
            stpg[1] = 0x0A;
            stpg[9] = 8;
            byte[] descriptor = {0, 0, 0, 0, 0x00, 0, (byte) (askerGroup >>> 8), (byte) askerGroup};
            assertEquals(0, ReplicatedIscsiPeers.settled(sessions.get(asker), stpg, descriptor, false).status());
            for (IscsiTestInitiator s : sessions) {
                first = awaitGroups(s, "the asking peer leads", x -> optimized(x) == 1 && x.get(askerGroup) == 0);
            }
            leader = asker;

            // the leader stops; each other peer's session hears of it and sees a new leader
            peers.stop(leader);
            int oldLeaderGroup = -1; // from the first report
            for (Map.Entry<Integer, Integer> e : first.entrySet()) {
                if (e.getValue() == 0) {
                    oldLeaderGroup = e.getKey();
                }
            }
            int stopped = oldLeaderGroup;
            int newLeader = -1;
            for (int i = 0; i < 3; i++) {
                if (i == leader) {
                    continue;
                }
                IscsiTestInitiator s = sessions.get(i);
                IscsiTestInitiator.Result[] ua = new IscsiTestInitiator.Result[1];
                Eventually.await("ASYMMETRIC ACCESS STATE CHANGED on peer " + (i + 1), () -> {
                    try {
                        ua[0] = s.command(new byte[6], new byte[0], 0, 0, false);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    return ua[0].status() != 0 && ua[0].ascq() == 0x2A06;
                });
                Map<Integer, Integer> g = awaitGroups(s, "a new leader seen from peer " + (i + 1),
                        x -> optimized(x) == 1 && x.get(stopped) != 0);
                if (g.get((int) identity(s)[2]) == 0) {
                    newLeader = i;
                }
            }
            assertTrue(newLeader >= 0, "the new leader is one of the peers still up");

            // a write down the path that forwards, read back down the new leader's
            int forwarder = 3 - leader - newLeader;
            byte[] block = new byte[512];
            new Random(5).nextBytes(block);
            byte[] write = new byte[10];
            write[0] = 0x2A;
            write[5] = 9;
            write[8] = 1;
            assertEquals(0, ReplicatedIscsiPeers.settled(sessions.get(forwarder), write, block, false).status());
            byte[] read = Arrays.copyOf(write, 10);
            read[0] = 0x28;
            // more state changes may follow (the new leader is ready only once an entry of its term commits)
            IscsiTestInitiator.Result back = ReplicatedIscsiPeers.settled(sessions.get(newLeader), read, new byte[0], true);
            assertEquals(0, back.status());
            assertArrayEquals(block, back.dataIn());
        } finally {
            peers.close(sessions);
        }
    }
}
