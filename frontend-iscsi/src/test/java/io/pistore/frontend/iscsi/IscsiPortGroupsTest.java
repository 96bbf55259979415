package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.ForwardingVolume;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.PathGroup;
import io.pistore.spi.PathState;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Implicit ALUA over loopback: the standard INQUIRY's TPGS, this port's relative target port and
 * target port group in the device identification page, REPORT TARGET PORT GROUPS in both formats
 * as the volume's {@link PathGroup} says (a volume served alone: one active/optimized group), and a
 * change of any group's state as ASYMMETRIC ACCESS STATE CHANGED for every I_T nexus on the unit.
 */
@Timeout(120)
class IscsiPortGroupsTest extends IscsiLoopbackFixture {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    /** A volume whose peers and their states the test sets. */
    static final class Peered extends ForwardingVolume {
        volatile PathGroup group;

        Peered() {
            super(new MemoryVolume("r", F, 64));
        }

        @Override
        public PathGroup pathGroup() {
            return group;
        }
    }

    private final Peered replicated = new Peered();

    @Override
    void createVolumes() throws IOException {
        super.createVolumes();
        replicated.group = group("n2", PathState.OPTIMIZED, PathState.NON_OPTIMIZED, PathState.NON_OPTIMIZED);
        store.attach(replicated);
    }

    /** Peers n1, n2, n3 in those states, as {@code self} sees them. */
    static PathGroup group(String self, PathState... states) {
        Map<String, PathState> m = new LinkedHashMap<>();
        for (int i = 0; i < states.length; i++) {
            m.put("n" + (i + 1), states[i]);
        }
        return new PathGroup(self, m);
    }

    static byte[] rtpg(int format, int alloc) {
        byte[] c = new byte[12];
        c[0] = (byte) 0xA3;
        c[1] = (byte) (format << 5 | 0x0A);
        Pdu.putInt(c, 6, alloc);
        return c;
    }

    /** The groups of a REPORT TARGET PORT GROUPS answer: number to {state, supported states, port count, port}. */
    static Map<Integer, int[]> groups(byte[] d, int header) {
        assertEquals(d.length - 4, Pdu.getInt(d, 0), "RETURN DATA LENGTH");
        Map<Integer, int[]> g = new LinkedHashMap<>();
        for (int o = header; o < d.length; ) {
            int ports = d[o + 7] & 0xff;
            int[] v = {d[o] & 0x0f, d[o + 1] & 0xff, ports, Cdb.u16(d, o + 10)};
            assertEquals(0, d[o] & 0x80, "PREF");
            g.put(Cdb.u16(d, o + 2), v);
            o += 8 + 4 * ports;
        }
        return g;
    }

    static Map<Integer, int[]> report(IscsiTestInitiator c, int format) throws IOException {
        IscsiTestInitiator.Result r = c.command(rtpg(format, 4096), new byte[0], 0, 4096, true);
        assertEquals(GOOD, r.status(), "sense " + Integer.toHexString(r.ascq()));
        if (format == 1) {
            assertEquals(0x10, r.dataIn()[4] & 0x70, "FORMAT TYPE 001b");
            assertEquals(ScsiPortGroups.IMPLICIT_TRANSITION_SECONDS, r.dataIn()[5] & 0xff, "IMPLICIT TRANSITION TIME");
        }
        return groups(r.dataIn(), format == 1 ? 8 : 4);
    }

    /** {relative target port, target port group} of the device identification page's target port designators. */
    static int[] ownPort(IscsiTestInitiator c) throws IOException {
        IscsiTestInitiator.Result r = c.command(new byte[] {0x12, 0x01, (byte) 0x83, 0x10, 0x00, 0x00}, new byte[0], 0,
                4096, true);
        assertEquals(GOOD, r.status());
        byte[] d = r.dataIn();
        int[] found = {-1, -1};
        for (int o = 4; o < d.length; o += 4 + (d[o + 3] & 0xff)) {
            if ((d[o + 1] & 0x30) != 0x10) {
                continue; // not associated with the target port
            }
            int type = d[o + 1] & 0x0f;
            if (type == 4 || type == 5) {
                assertEquals(4, d[o + 3], "designator length");
                assertEquals(-1, found[type - 4], "one designator of type " + type);
                found[type - 4] = Cdb.u16(d, o + 6);
            }
        }
        return found;
    }

    static int tpgs(IscsiTestInitiator c) throws IOException {
        IscsiTestInitiator.Result r = c.command(new byte[] {0x12, 0, 0, 0, 96, 0}, new byte[0], 0, 96, true);
        assertEquals(GOOD, r.status());
        return (r.dataIn()[5] & 0x30) >>> 4;
    }

    @Test
    void aVolumeServedAloneIsOneActiveOptimizedGroupOfThisPort() throws IOException {
        try (IscsiTestInitiator c = login("v")) {
            assertEquals(3, tpgs(c), "TPGS 11b: implicit and explicit ALUA");
            assertArrayEquals(new int[] {1, 1}, ownPort(c), "relative target port 1 in group 1");
            for (int format = 0; format <= 1; format++) {
                Map<Integer, int[]> g = report(c, format);
                assertEquals(Set.of(1), g.keySet());
                assertArrayEquals(new int[] {ScsiPortGroups.ACTIVE_OPTIMIZED, 0x83, 1, 1}, g.get(1));
            }
        }
    }

    @Test
    void eachPeerIsAGroupOfOnePortInTheStateThePeerAnsweringSees() throws IOException {
        Map<String, Integer> ids = ScsiPortGroups.groupIds(List.of("n1", "n2", "n3"));
        try (IscsiTestInitiator c = login("r")) {
            assertEquals(3, tpgs(c));
            int own = ids.get("n2");
            assertArrayEquals(new int[] {own, own}, ownPort(c), "this peer's port and group");
            Map<Integer, int[]> g = report(c, 0);
            assertEquals(Set.copyOf(ids.values()), g.keySet());
            assertEquals(ScsiPortGroups.ACTIVE_OPTIMIZED, g.get(ids.get("n1"))[0], "the leader");
            assertEquals(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, g.get(own)[0], "this peer, which forwards");
            assertEquals(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, g.get(ids.get("n3"))[0]);
            for (Map.Entry<Integer, int[]> e : g.entrySet()) {
                assertEquals(1, e.getValue()[2], "one port per group");
                assertEquals(e.getKey(), e.getValue()[3], "the port numbered as its group");
            }
            assertEquals(g.keySet(), report(c, 1).keySet(), "the extended format lists the same groups");

            replicated.group = group("n2", PathState.INACCESSIBLE, PathState.INACCESSIBLE, PathState.INACCESSIBLE);
            assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, awaitAttention(c));
            for (int[] v : report(c, 1).values()) {
                assertEquals(ScsiPortGroups.TRANSITIONING, v[0], "no leader known: every group transitioning");
            }
            replicated.group = null; // the peers cannot be told: the same groups, in transition
            assertEquals(g.keySet(), report(c, 0).keySet());
            assertEquals(own, ownPort(c)[1]);
        }
    }

    /** Sends TEST UNIT READY until one is not GOOD (the server looks at the states a few times a second). */
    private static IscsiTestInitiator.Result awaitAttention(IscsiTestInitiator c) {
        IscsiTestInitiator.Result[] got = new IscsiTestInitiator.Result[1];
        Eventually.await("a unit attention", () -> {
            try {
                got[0] = tur(c);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return got[0].status() != GOOD;
        });
        return got[0];
    }

    @Test
    void aLeaderChangeIsAUnitAttentionForEveryNexusOnceThenTheNewStates() throws IOException {
        Map<String, Integer> ids = ScsiPortGroups.groupIds(List.of("n1", "n2", "n3"));
        try (IscsiTestInitiator a = loginAs("a", "r"); IscsiTestInitiator b = loginAs("b", "r");
             IscsiTestInitiator other = loginAs("c", "v")) {
            assertEquals(GOOD, tur(a).status());
            replicated.group = group("n2", PathState.NON_OPTIMIZED, PathState.OPTIMIZED, PathState.NON_OPTIMIZED);
            assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, awaitAttention(a));
            assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, tur(b));
            assertEquals(GOOD, tur(a).status(), "reported once");
            assertEquals(GOOD, tur(b).status());
            assertEquals(GOOD, tur(other).status(), "another unit's sessions see nothing");
            Map<Integer, int[]> g = report(a, 1);
            assertEquals(ScsiPortGroups.ACTIVE_OPTIMIZED, g.get(ids.get("n2"))[0], "this peer leads now");
            assertEquals(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, g.get(ids.get("n1"))[0]);

            // a member added: one group more, a change too
            Map<String, PathState> four = new HashMap<>(replicated.group.states());
            four.put("n4", PathState.NON_OPTIMIZED);
            replicated.group = new PathGroup("n2", four);
            assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, awaitAttention(b));
            assertEquals(4, report(b, 0).size());
        }
    }

    @Test
    void aReportThatShowsAChangeFirstLeavesTheUnitAttentionToEverySession() throws IOException {
        Map<String, Integer> ids = ScsiPortGroups.groupIds(List.of("n1", "n2", "n3"));
        try (IscsiTestInitiator a = loginAs("a", "r"); IscsiTestInitiator b = loginAs("b", "r")) {
            replicated.group = group("n2", PathState.NON_OPTIMIZED, PathState.NON_OPTIMIZED, PathState.OPTIMIZED);
            // asked at once, most likely before the server's next look at the states
            IscsiTestInitiator.Result r = b.command(rtpg(0, 4096), new byte[0], 0, 4096, true);
            if (r.status() == GOOD) {
                assertEquals(ScsiPortGroups.ACTIVE_OPTIMIZED, groups(r.dataIn(), 4).get(ids.get("n3"))[0]);
            } else {
                assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, r);
            }
            assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, awaitAttention(a));
        }
    }

    @Test
    void theAllocationLengthCutsTheReportAndOtherFormatsAreRefused() throws IOException {
        try (IscsiTestInitiator c = login("r")) {
            IscsiTestInitiator.Result full = c.command(rtpg(1, 4096), new byte[0], 0, 4096, true);
            IscsiTestInitiator.Result cut = c.command(rtpg(1, 4), new byte[0], 0, 4, true);
            assertEquals(GOOD, cut.status());
            assertEquals(4, cut.dataIn().length);
            assertEquals(full.dataIn().length - 4, Pdu.getInt(cut.dataIn(), 0), "the whole length, cut or not");
            for (int format = 2; format < 8; format++) {
                IscsiTestInitiator.Result r = c.command(rtpg(format, 4096), new byte[0], 0, 4096, true);
                assertEquals(CHECK, r.status(), "format " + format);
                assertEquals(0x05, r.senseKey());
                assertEquals(0x2400, r.ascq(), "INVALID FIELD IN CDB");
            }
        }
    }

    @Test
    void groupNumbersAreTheSameOnEveryPeerAndDistinctWhenTheirHashesCollide() {
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            List<String> peers = new ArrayList<>();
            for (int i = 0; i < 1 + random.nextInt(7); i++) {
                peers.add("peer-" + random.nextInt(100_000));
            }
            Map<String, Integer> ids = ScsiPortGroups.groupIds(peers);
            List<String> shuffled = new ArrayList<>(peers);
            java.util.Collections.shuffle(shuffled, random);
            assertEquals(ids, ScsiPortGroups.groupIds(shuffled), "any order");
            assertEquals(ids.size(), new TreeSet<>(ids.values()).size(), "distinct");
            ids.values().forEach(n -> assertTrue(n >= 1 && n <= 0xFFFF, "number " + n));
        }
        // two ids whose hashes give one number: the first in id order keeps it, the second takes the next
        Map<Integer, String> seen = new HashMap<>();
        String a = null;
        String b = null;
        for (int i = 0; b == null; i++) {
            String id = "p" + i;
            int n = ScsiPortGroups.groupIds(List.of(id)).get(id);
            String before = seen.putIfAbsent(n, id);
            if (before != null) {
                a = before.compareTo(id) < 0 ? before : id;
                b = a.equals(id) ? before : id;
            }
        }
        Map<String, Integer> ids = ScsiPortGroups.groupIds(List.of(b, a));
        int n = ScsiPortGroups.groupIds(List.of(a)).get(a);
        assertEquals(n, ids.get(a));
        assertEquals(n % 0xFFFF + 1, ids.get(b));
        assertNotEquals(ids.get(a), ids.get(b));
    }
}
