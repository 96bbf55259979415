package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Session reinstatement (RFC 7143 6.3.5) over loopback: an initiator that logs in again with the
 * same name and ISID, as one does after a network failure the target did not see, ends its older
 * session and that session's I_T nexus (its SPC-2 reservation released) before the new one begins;
 * the old connection's own end, after the new session took a reservation, leaves that reservation
 * alone. Another ISID is another nexus, and its sessions live side by side.
 */
@Timeout(60)
class IscsiReinstatementTest extends IscsiLoopbackFixture {
    static final long ISID = 0x4000_0000_0001L;

    IscsiTestInitiator open(String name, long isid) throws IOException {
        return loginAs(name, isid, "v", "ImmediateData", "Yes");
    }

    @Test
    void aNewSessionOfTheSamePortEndsTheOldOneAndItsNexus() throws Exception {
        try (IscsiTestInitiator old = open("a", ISID); IscsiTestInitiator other = open("b", ISID)) {
            assertEquals(GOOD, run6(old, 0x16), "RESERVE(6)");
            assertEquals(CONFLICT, write(other));
            try (IscsiTestInitiator again = open("a", ISID)) {
                assertTrue(log.stream().anyMatch(l -> l.contains("session reinstatement")), log::toString);
                assertEquals(GOOD, write(other), "the old nexus, and its reservation, ended with the old session");
                assertEquals(GOOD, run6(again, 0x16), "the new session reserves");
                Eventually.await("the older connection ends", () -> log.stream().anyMatch(l -> l.contains("ended: replaced by a new session")));
                assertEquals(CONFLICT, write(other), "the old connection's end left the new reservation alone");
                assertEquals(GOOD, write(again));
                assertEquals(GOOD, run6(again, 0x17), "RELEASE(6)");
            }
        }
    }

    @Test
    void anotherIsidIsAnotherNexusAndBothSessionsStay() throws Exception {
        try (IscsiTestInitiator first = open("a", ISID); IscsiTestInitiator second = open("a", ISID + 1)) {
            assertEquals(GOOD, run6(first, 0x16), "RESERVE(6)");
            assertEquals(CONFLICT, write(second), "another ISID is another I_T nexus");
            assertEquals(GOOD, write(first), "the first session goes on");
            assertTrue(log.stream().noneMatch(l -> l.contains("session reinstatement")), log::toString);
            assertEquals(GOOD, run6(first, 0x17));
        }
    }
}
