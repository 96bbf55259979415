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
 * session, and the I_T nexus goes on with the new one: the reservation the old session took is
 * still held once the old connection has ended (its end is no loss of the nexus). Another ISID is
 * another nexus, and its sessions live side by side.
 */
@Timeout(60)
class IscsiReinstatementTest extends IscsiLoopbackFixture {
    static final long ISID = 0x4000_0000_0001L;

    IscsiTestInitiator open(String name, long isid) throws IOException {
        return loginAs(name, isid, "v", "ImmediateData", "Yes");
    }

    @Test
    void aNewSessionOfTheSamePortEndsTheOldOneAndKeepsItsNexus() throws Exception {
        try (IscsiTestInitiator old = open("a", ISID); IscsiTestInitiator other = open("b", ISID)) {
            assertEquals(GOOD, run6(old, 0x16), "RESERVE(6)");
            try (IscsiTestInitiator again = open("a", ISID)) {
                Eventually.await("the older session ends", () -> log.stream().anyMatch(l -> l.contains("ended: replaced by a new session")));
                assertTrue(log.stream().anyMatch(l -> l.contains("session reinstatement")), log::toString);
                assertEquals(GOOD, write(again), "the new session holds the nexus's reservation");
                assertEquals(CONFLICT, write(other), "and others are still held off");
                assertEquals(GOOD, run6(again, 0x17), "RELEASE(6) by the same nexus");
                assertEquals(GOOD, write(other));
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
