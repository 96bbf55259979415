package io.pistore.it.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.internal.RdmaHostConnection;
import java.util.Set;

/**
 * The compatibility kit over the rdma transport with the soft verbs provider: integrity MRs (the
 * emulated signature engine) for 8-byte-tuple formats, software PI for the others. The soft NIC
 * executes local work (REG, LOCAL_INV) on its own thread after the post returned, as a real NIC does,
 * and each round trip checks which path its format took, so a silent fallback to software PI fails.
 */
class RdmaTransportKitTest extends TransportCompatibilityKit {
    /** The kit volumes the NIC's signature engine carries: 512+8 and 4096+8, CRC-16 or IP checksum, Types 1-3. */
    static final Set<String> OFFLOADED = Set.of("v512_8", "v512_8_ip", "v4096_8", "v4096_8_t2", "v4096_8_t3");

    @Override
    protected String transportName() {
        return "rdma";
    }

    @Override
    protected TransportOptions transportOptions() {
        return TransportOptions.NONE.with("rdma.provider", "soft").with("rdma.pi", "auto")
                .with("rdma.soft.localWork", "async");
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }

    /** Whether requests on {@code vol} must go through integrity MRs. */
    protected boolean offloaded(String vol) {
        return OFFLOADED.contains(vol);
    }

    @Override
    protected void assertPathRan(String vol, BlockFormat f) {
        RdmaHostConnection c = (RdmaHostConnection) connection;
        long offloaded = c.offloadedRequests(vol);
        long software = c.softwareRequests(vol);
        if (offloaded(vol)) {
            assertTrue(offloaded > 0, vol + " (" + f + "): no request went through integrity MRs");
            assertEquals(0, software, vol + " (" + f + "): requests fell back to software PI");
        } else {
            assertEquals(0, offloaded, vol + " (" + f + "): the NIC cannot carry this format");
            assertTrue(software > 0, vol + " (" + f + "): no request went through the software path");
        }
    }
}
