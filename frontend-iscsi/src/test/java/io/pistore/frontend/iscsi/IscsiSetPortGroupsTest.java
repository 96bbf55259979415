package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.ForwardingVolume;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.PathGroup;
import io.pistore.spi.PathState;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Explicit ALUA over loopback: SET TARGET PORT GROUPS moves the lead to the peer of the group named
 * active/optimized (the volume is asked, {@link io.pistore.spi.HostConnection#optimizePath}), the
 * unit attention of the change goes to every nexus but the asking one, and every list the unit
 * cannot carry out is refused before anything moves, with SPC-4's sense.
 */
@Timeout(120)
class IscsiSetPortGroupsTest extends IscsiLoopbackFixture {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int ILLEGAL_REQUEST = ScsiResult.ILLEGAL_REQUEST;
    private static final Map<String, Integer> IDS = ScsiPortGroups.groupIds(List.of("n1", "n2", "n3"));

    /** A volume of peers n1 to n3 seen from n2, whose leader moves where it is asked to (or fails to). */
    static final class Movable extends ForwardingVolume {
        volatile PathGroup group = IscsiPortGroupsTest.group("n2", PathState.OPTIMIZED, PathState.NON_OPTIMIZED,
                PathState.NON_OPTIMIZED);
        final List<String> moves = new ArrayList<>();
        volatile boolean fails;

        Movable() {
            super(new MemoryVolume("r", F, 64));
        }

        @Override
        public PathGroup pathGroup() {
            return group;
        }

        @Override
        public synchronized void optimizePath(String replicaId) throws IOException {
            moves.add(replicaId);
            if (fails) {
                throw new IOException("volume r: leadership not transferred to " + replicaId + ": timed out");
            }
            Map<String, PathState> m = new LinkedHashMap<>();
            group.states().keySet().forEach(id -> m.put(id, id.equals(replicaId) ? PathState.OPTIMIZED
                    : PathState.NON_OPTIMIZED));
            group = new PathGroup("n2", m);
        }

        synchronized List<String> moves() {
            return List.copyOf(moves);
        }
    }

    private final Movable replicated = new Movable();

    @Override
    void createVolumes() throws IOException {
        super.createVolumes();
        store.attach(replicated);
    }

    /** SET TARGET PORT GROUPS with a parameter list of length {@code length} and these {state, group} descriptors. */
    static IscsiTestInitiator.Result stpg(IscsiTestInitiator c, long length, int[]... descriptors) throws IOException {
        byte[] cdb = new byte[12];
        cdb[0] = (byte) ScsiCommands.MAINTENANCE_OUT;
        cdb[1] = ScsiPortGroups.SET_TARGET_PORT_GROUPS;
        Pdu.putInt(cdb, 6, (int) length);
        byte[] p = new byte[4 + 4 * descriptors.length];
        for (int i = 0; i < descriptors.length; i++) {
            p[4 + 4 * i] = (byte) descriptors[i][0];
            p[4 + 4 * i + 2] = (byte) (descriptors[i][1] >>> 8);
            p[4 + 4 * i + 3] = (byte) descriptors[i][1];
        }
        return c.command(cdb, p, p.length, p.length, false);
    }

    static IscsiTestInitiator.Result stpg(IscsiTestInitiator c, int[]... descriptors) throws IOException {
        return stpg(c, 4 + 4L * descriptors.length, descriptors);
    }

    static int[] set(int state, String peer) {
        return new int[] {state, IDS.get(peer)};
    }

    private static void assertSense(int key, int ascq, IscsiTestInitiator.Result r) {
        assertEquals(CHECK, r.status());
        assertEquals(key, r.senseKey());
        assertEquals(ascq, r.ascq(), Integer.toHexString(r.ascq()));
    }

    @Test
    void aGroupSetActiveOptimizedGetsTheLeadAndTheOtherNexusesAreTold() throws IOException {
        try (IscsiTestInitiator a = loginAs("a", "r"); IscsiTestInitiator b = loginAs("b", "r")) {
            assertEquals(GOOD, tur(a).status());
            assertEquals(GOOD, tur(b).status());
            assertEquals(GOOD, stpg(a, set(ScsiPortGroups.ACTIVE_OPTIMIZED, "n3")).status());
            assertEquals(List.of("n3"), replicated.moves(), "the lead moved to n3's peer");
            assertTrue(log.stream().anyMatch(l -> l.startsWith("iscsi: volume r: SET TARGET PORT GROUPS from iqn.2026-12.io.pistore:a,i,0x")
                    && l.endsWith(" moved the lead to n3")), log::toString);
            Map<Integer, int[]> g = IscsiPortGroupsTest.report(a, 1);
            assertEquals(ScsiPortGroups.ACTIVE_OPTIMIZED, g.get(IDS.get("n3"))[0]);
            assertEquals(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, g.get(IDS.get("n1"))[0]);
            IscsiTestInitiator.Result[] got = new IscsiTestInitiator.Result[1];
            Eventually.await("b's unit attention", () -> {
                try {
                    got[0] = tur(b);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return got[0].status() != GOOD;
            });
            assertUnitAttention(ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED, got[0]);
            assertEquals(GOOD, tur(a).status(), "the nexus that asked is not told of its own change");

            // what already holds moves nothing: n3 leads; n2 forwards; n1 and n2 left to forward while n3 leads
            assertEquals(GOOD, stpg(a, set(ScsiPortGroups.ACTIVE_OPTIMIZED, "n3")).status());
            assertEquals(GOOD, stpg(a, set(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, "n2")).status());
            assertEquals(GOOD, stpg(b, set(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, "n1"),
                    set(ScsiPortGroups.ACTIVE_OPTIMIZED, "n3")).status());
            assertEquals(GOOD, stpg(a, 0).status(), "an empty list");
            assertEquals(List.of("n3"), replicated.moves());

            // the leader's group set non-optimized beside another set optimized: the lead moves there
            assertEquals(GOOD, stpg(b, set(ScsiPortGroups.ACTIVE_NON_OPTIMIZED, "n3"),
                    set(ScsiPortGroups.ACTIVE_OPTIMIZED, "n2")).status());
            assertEquals(List.of("n3", "n2"), replicated.moves());
            assertEquals(ScsiPortGroups.ACTIVE_OPTIMIZED, IscsiPortGroupsTest.report(b, 0).get(IDS.get("n2"))[0]);
        }
    }

    @Test
    void aListTheUnitCannotCarryOutIsRefusedAndMovesNothing() throws IOException {
        int ao = ScsiPortGroups.ACTIVE_OPTIMIZED;
        int an = ScsiPortGroups.ACTIVE_NON_OPTIMIZED;
        int invalidParameter = 0x2600;
        try (IscsiTestInitiator c = login("r")) {
            for (int state : new int[] {0x2, 0x3, 0x4, 0xE, ScsiPortGroups.TRANSITIONING}) {
                assertSense(ILLEGAL_REQUEST, invalidParameter, stpg(c, new int[] {state, IDS.get("n3")}));
            }
            int unknown = 1;
            while (IDS.containsValue(unknown)) {
                unknown++;
            }
            assertSense(ILLEGAL_REQUEST, invalidParameter, stpg(c, new int[] {ao, unknown}));
            assertSense(ILLEGAL_REQUEST, invalidParameter, stpg(c, set(ao, "n3"), set(an, "n3")));
            assertSense(ILLEGAL_REQUEST, invalidParameter, stpg(c, set(ao, "n2"), set(ao, "n3")));
            assertSense(ILLEGAL_REQUEST, invalidParameter, stpg(c, set(an, "n1")));
            int lengthError = 0x1A00;
            assertSense(ILLEGAL_REQUEST, lengthError, stpg(c, 6, set(ao, "n3")));
            assertSense(ILLEGAL_REQUEST, lengthError, stpg(c, 12, set(ao, "n3")));
            assertSense(ILLEGAL_REQUEST, lengthError, stpg(c, 2));
            assertEquals(List.of(), replicated.moves(), "nothing moved");

            // an election: no group leads, and a move waits for it to end
            PathGroup before = replicated.group;
            replicated.group = IscsiPortGroupsTest.group("n2", PathState.INACCESSIBLE, PathState.INACCESSIBLE,
                    PathState.INACCESSIBLE);
            assertSense(0x02, 0x040A, stpg(c, set(ao, "n3"))); // NOT READY, ASYMMETRIC ACCESS STATE TRANSITION
            assertEquals(GOOD, stpg(c, set(an, "n1")).status(), "no move asked");
            assertEquals(List.of(), replicated.moves(), "nothing moved");
            replicated.group = before;

            replicated.fails = true;
            assertSense(0x04, 0x670A, stpg(c, set(ao, "n3"))); // HARDWARE ERROR, SET TARGET PORT GROUPS COMMAND FAILED
            assertEquals(List.of("n3"), replicated.moves());
            assertEquals(ao, IscsiPortGroupsTest.report(c, 0).get(IDS.get("n1"))[0], "the leader stays");
            assertTrue(log.stream().anyMatch(l -> l.endsWith("failed: volume r: leadership not transferred to n3: timed out")),
                    log::toString);
        }
    }

    @Test
    void aVolumeServedAloneKeepsItsOneGroupOptimized() throws IOException {
        try (IscsiTestInitiator c = login("v")) {
            assertEquals(GOOD, stpg(c, new int[] {ScsiPortGroups.ACTIVE_OPTIMIZED, ScsiPortGroups.ONLY_GROUP}).status());
            assertSense(ILLEGAL_REQUEST, 0x2600, stpg(c, new int[] {ScsiPortGroups.ACTIVE_NON_OPTIMIZED,
                    ScsiPortGroups.ONLY_GROUP}));
        }
    }

    @Test
    void readFullStatusNamesThisPeersPort() throws IOException {
        try (IscsiTestInitiator c = login("r")) {
            byte[] register = new byte[10];
            register[0] = 0x5F; // PERSISTENT RESERVE OUT, REGISTER
            Pdu.putInt(register, 5, 24);
            byte[] keys = new byte[24];
            Pdu.putLong(keys, 8, 0x1234);
            assertEquals(GOOD, c.command(register, keys, 24, 24, false).status());
            byte[] full = {0x5E, 0x03, 0, 0, 0, 0, 0, 0x10, 0x00, 0};
            IscsiTestInitiator.Result r = c.command(full, new byte[0], 0, 4096, true);
            assertEquals(GOOD, r.status());
            assertEquals(0x1234, Pdu.getLong(r.dataIn(), 8), "the key registered");
            assertEquals((int) IDS.get("n2"), Cdb.u16(r.dataIn(), 8 + 18), "RELATIVE TARGET PORT IDENTIFIER");
        }
    }
}
