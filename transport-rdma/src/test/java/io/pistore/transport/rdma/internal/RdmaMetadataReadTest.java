package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Metadata-only reads (block status) over rdma: a target whose engine serves them RDMA-writes the
 * stored metadata alone and reads no data; one that does not (an older pistore answers the flag with
 * INVALID_FIELD) has the host read the blocks whole and keep their metadata. Either way the host gets
 * what a whole read's metadata list holds.
 */
class RdmaMetadataReadTest {
    private static Completion submit(RdmaHostConnection h, BlockRequest r) throws Exception {
        return h.queue(0).submit(r).get(30, TimeUnit.SECONDS);
    }

    private static RdmaOptions options() {
        return RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft")));
    }

    @ParameterizedTest(name = "target serves them: {0}")
    @ValueSource(booleans = {true, false})
    void theStoredMetadataComesBackAsAWholeReadsWould(boolean serves) throws Exception {
        BlockFormat f = BlockFormat.of(4096, 8);
        MemoryTarget memory = new MemoryTarget(f, 64);
        memory.servesMetadataOnly = serves;
        new Random(12).nextBytes(memory.meta); // whatever is stored: nothing is checked
        RdmaTarget target = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", memory, true);
        RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true), options(), target.address(),
                new ConnectOptions(1, 4));
        try {
            assertTrue(h.readsMetadataOnly());
            byte[] meta = new byte[5 * 8];
            Completion c = submit(h, BlockRequest.readMetadata(MemoryTarget.VOLUME, 7, 5, ScatterList.wrap(meta)));
            assertEquals(Status.SUCCESS, c.status(), c.toString());
            byte[] stored = java.util.Arrays.copyOfRange(memory.meta, 7 * 8, 12 * 8);
            assertArrayEquals(stored, meta);
            byte[] whole = new byte[5 * 8];
            assertEquals(Status.SUCCESS, submit(h, BlockRequest.read(MemoryTarget.VOLUME, 7, 5,
                    ScatterList.wrap(new byte[5 * 4096]), ScatterList.wrap(whole),
                    Protection.pass(io.pistore.integrity.CheckFlags.NONE, 7, 0, 0))).status());
            assertArrayEquals(whole, meta, "the same as a whole read's metadata");
            BlockRequest reached = memory.requests.get(0);
            assertEquals(Operation.READ, reached.op());
            assertEquals(serves, reached.isMetadataOnly(), serves ? "no data read at the target" : "read whole instead");
        } finally {
            h.close();
            target.close();
        }
    }

    @Test
    void aVolumeWithoutMetadataIsAnInvalidField() throws Exception {
        MemoryTarget memory = new MemoryTarget(BlockFormat.of(4096, 0), 16);
        memory.servesMetadataOnly = true;
        RdmaTarget target = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", memory, true);
        RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true), options(), target.address(),
                new ConnectOptions(1, 4));
        try {
            Completion c = submit(h, BlockRequest.readMetadata(MemoryTarget.VOLUME, 0, 2, ScatterList.wrap(new byte[0])));
            assertEquals(Status.INVALID_FIELD, c.status(), c.toString());
            assertTrue(c.message().contains("has no metadata"), c.message());
            assertFalse(memory.requests.stream().anyMatch(r -> r.op() == Operation.READ), "nothing read");
        } finally {
            h.close();
            target.close();
        }
    }
}
