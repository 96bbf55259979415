package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every integrity MR rule of {@link IntegrityMrModelTest} with host and target on two soft devices
 * that reach each other only over the packet path: the signature engine runs on the side that owns
 * the integrity MR (the host's on the host's device as the responder of the target's READ/WRITE, the
 * target's on its own device as the requester), the wire between them carries the interleaved
 * stream, and a flip made before the packet's CRC (the wire tap) is caught by the signature check.
 */
class IntegrityMrOverPacketsTest extends IntegrityMrModelTest {
    @BeforeEach
    void overPackets() {
        Pair.overPackets = true;
    }

    @AfterEach
    void inProcessAgain() {
        Pair.overPackets = false;
    }

    @Test
    void thePairsRunOverThePacketPath() throws Exception {
        try (Pair p = new Pair()) {
            assertNotSame(p.dev, p.targetDev, "two devices");
            assertNotNull(((SoftQp) p.hq()).link, "the host's QP sends packets");
            assertNotNull(((SoftQp) p.tq()).link, "the target's QP sends packets");
        }
    }
}
