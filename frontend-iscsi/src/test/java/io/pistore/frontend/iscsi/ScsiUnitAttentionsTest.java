package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The unit attention queues on their own: only nexuses with a session get conditions, each once,
 * at most {@value ScsiUnitAttentions#MAX_PER_NEXUS}, oldest first; INQUIRY and REPORT LUNS pass
 * them by; the lock-free {@code anyPending} follows every change.
 */
class ScsiUnitAttentionsTest {
    @Test
    void queuesPerNexus() {
        ScsiUnitAttentions ua = new ScsiUnitAttentions();
        ua.establishAll(ScsiUnitAttentions.RESET);
        ua.establish("nobody", ScsiUnitAttentions.RESET);
        assertFalse(ua.anyPending(), "no nexus on the unit, nothing kept");
        ua.attach("a");
        ua.attach("b");
        ua.establishAll(ScsiUnitAttentions.RESET);
        ua.establish("a", ScsiUnitAttentions.CAPACITY_DATA_HAS_CHANGED);
        ua.establish("a", ScsiUnitAttentions.RESET); // again: moves to the back, still once
        assertTrue(ua.anyPending());
        assertEquals(2, ua.pending("a"));
        assertEquals(-1, ua.take("a", 0x12), "INQUIRY");
        assertEquals(-1, ua.take("a", 0xA0), "REPORT LUNS");
        assertEquals(ScsiUnitAttentions.CAPACITY_DATA_HAS_CHANGED, ua.take("a", 0x00));
        assertEquals(ScsiUnitAttentions.RESET, ua.takeForRequestSense("a"));
        assertEquals(-1, ua.take("a", 0x00));
        assertTrue(ua.anyPending(), "b's is still there");
        ua.detach("b");
        assertFalse(ua.anyPending(), "b's conditions left with its last session");
        for (int i = 0; i < 20; i++) {
            ua.establish("a", 0x2A00 + i);
        }
        assertEquals(ScsiUnitAttentions.MAX_PER_NEXUS, ua.pending("a"));
        assertEquals(0x2A00 + 20 - ScsiUnitAttentions.MAX_PER_NEXUS, ua.take("a", 0x00), "the oldest kept");
        ua.establish("a", ScsiUnitAttentions.REPORTED_LUNS_DATA_HAS_CHANGED);
        int before = ua.pending("a");
        assertEquals(-1, ua.take("a", 0xA0));
        assertEquals(before - 1, ua.pending("a"), "REPORT LUNS clears REPORTED LUNS DATA HAS CHANGED");
        ua.attach("a");
        ua.detach("a");
        assertTrue(ua.anyPending(), "a has a session left");
        ua.detach("a");
        assertFalse(ua.anyPending());
    }
}
