package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestCheck} at each edge of each rule, with the one-line reason a host or a target
 * prints: the first value refused and the last one accepted.
 */
class RequestCheckMessagesTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private static final VolumeInfo V = new VolumeInfo("v1", 1000, F);
    private static final VolumeInfo NO_META = new VolumeInfo("n", 1000, BlockFormat.of(4096, 0));
    private static final long LIMIT = 8 * (4096 + 8);

    private static ScatterList bytes(int n) {
        return ScatterList.of(ByteBuffer.allocate(n));
    }

    private static void assertFails(Status s, String message, Completion c) {
        assertEquals(s, c.status(), String.valueOf(c));
        assertEquals(message, c.message());
    }

    @Test
    void headerReasonsNameTheValues() {
        assertFails(Status.INVALID_FIELD, "block count must be 1 to 2147483647, not 0",
                RequestCheck.validateHeader(Operation.READ, 0, 0, Protection.NONE, V, LIMIT));
        assertFails(Status.LBA_OUT_OF_RANGE, "lba 993 + 8 blocks is beyond the 1000 blocks of volume v1",
                RequestCheck.validateHeader(Operation.READ, 993, 8, Protection.NONE, V, LIMIT));
        assertFails(Status.INVALID_FIELD, "initial ref tag 0x100000000 does not fit the 32-bit reference tag",
                RequestCheck.validateHeader(Operation.WRITE, 0, 1, Protection.pass(CheckFlags.ALL, 1L << 32, 0, 0),
                        V, LIMIT));
    }

    @Test
    void theEdgesOfTheHeaderRules() {
        // The largest block count is a valid count (the range then decides), one more is not.
        assertFails(Status.LBA_OUT_OF_RANGE, "lba 0 + 2147483647 blocks is beyond the 1000 blocks of volume v1",
                RequestCheck.validateHeader(Operation.READ, 0, Integer.MAX_VALUE, Protection.NONE, V, Long.MAX_VALUE));
        assertNull(RequestCheck.validateHeader(Operation.DEALLOCATE, 0, 1000, Protection.NONE, V, 0));
        assertNull(RequestCheck.validateHeader(Operation.DEALLOCATE, 999, 1, Protection.NONE, V, 0));
        assertEquals(Status.LBA_OUT_OF_RANGE,
                RequestCheck.validateHeader(Operation.DEALLOCATE, 0, 1001, Protection.NONE, V, 0).status());
        // The widest ref tag that fits passes.
        assertNull(RequestCheck.validateHeader(Operation.WRITE, 0, 1,
                Protection.pass(CheckFlags.ALL, 0xFFFFFFFFL, 0, 0), V, LIMIT));
        // Write-zeroes is not a transfer: neither the limit nor the ref tag is looked at.
        assertNull(RequestCheck.validateHeader(Operation.WRITE_ZEROES, 0, 9,
                Protection.pass(CheckFlags.ALL, 1L << 40, 0, 0), V, LIMIT));
    }

    @Test
    void bufferReasonsNameTheSizes() {
        assertFails(Status.INVALID_FIELD, "data buffer holds 4096 bytes, 2 blocks of 4096 need 8192",
                RequestCheck.validate(BlockRequest.read("v1", 0, 2, bytes(4096), null, Protection.insertStrip(0)),
                        V, LIMIT));
        assertFails(Status.INVALID_FIELD, "data buffer holds 12288 bytes, 2 blocks of 4096 need 8192",
                RequestCheck.validate(BlockRequest.read("v1", 0, 2, bytes(12288), null, Protection.insertStrip(0)),
                        V, LIMIT));
        assertFails(Status.INVALID_FIELD, "metadata buffer holds 8 bytes, 2 blocks of 8 need 16",
                RequestCheck.validate(BlockRequest.write("v1", 0, 2, bytes(8192), bytes(8),
                        Protection.pass(CheckFlags.ALL, 0, 0, 0), false), V, LIMIT));
        assertFails(Status.INVALID_FIELD, "volume n (4096+0) has no metadata, the request carries some",
                RequestCheck.validate(BlockRequest.write("n", 0, 1, bytes(4096), bytes(0), Protection.NONE, false),
                        NO_META, LIMIT));
        assertFails(Status.INVALID_FIELD,
                "a write without PRACT to a volume with PI (4096+8) must carry its metadata",
                RequestCheck.validate(BlockRequest.write("v1", 0, 1, bytes(4096), null,
                        Protection.pass(CheckFlags.NONE, 0, 0, 0), false), V, LIMIT));
    }

    @Test
    void whatMayGoWithoutMetadata() {
        // PRACT: the next hop inserts the PI.
        assertNull(RequestCheck.validate(BlockRequest.write("v1", 0, 1, bytes(4096), null, Protection.insertStrip(0),
                false), V, LIMIT));
        // A read without PRACT and without metadata: the PI is not returned.
        assertNull(RequestCheck.validate(BlockRequest.read("v1", 0, 1, bytes(4096), null,
                Protection.pass(CheckFlags.NONE, 0, 0, 0)), V, LIMIT));
        // A volume without PI has nothing to carry.
        assertNull(RequestCheck.validate(BlockRequest.write("n", 0, 1, bytes(4096), null, Protection.NONE, false),
                NO_META, LIMIT));
    }

    @Test
    void readsNeedWritableBuffersWritesDoNot() {
        ScatterList roData = ScatterList.of(ByteBuffer.allocate(4096).asReadOnlyBuffer());
        ScatterList roMeta = ScatterList.of(ByteBuffer.allocate(8).asReadOnlyBuffer());
        assertFails(Status.INVALID_FIELD, "a read needs writable buffers",
                RequestCheck.validate(BlockRequest.read("v1", 0, 1, bytes(4096), roMeta,
                        Protection.pass(CheckFlags.ALL, 0, 0, 0)), V, LIMIT));
        assertNull(RequestCheck.validate(BlockRequest.read("v1", 0, 1, bytes(4096), bytes(8),
                Protection.pass(CheckFlags.ALL, 0, 0, 0)), V, LIMIT));
        assertNull(RequestCheck.validate(BlockRequest.write("v1", 0, 1, roData, roMeta,
                Protection.pass(CheckFlags.ALL, 0, 0, 0), false), V, LIMIT));
    }

    @Test
    void requestsWithoutDataSkipTheBufferChecks() {
        assertNull(RequestCheck.validate(BlockRequest.writeZeroes("v1", 0, 4, false), V, LIMIT));
        assertNull(RequestCheck.validate(BlockRequest.deallocate("v1", 0, 4), V, LIMIT));
        assertEquals(Status.LBA_OUT_OF_RANGE,
                RequestCheck.validate(BlockRequest.writeZeroes("v1", 999, 4, false), V, LIMIT).status());
    }

    /** A read of metadata alone: refused unless the caller serves it (a target, a host transport that carries it), then sized like any. */
    @Test
    void aMetadataOnlyReadPassesOnlyWhereItIsServed() {
        BlockRequest r = BlockRequest.readMetadata("v1", 0, 8, bytes(64));
        assertEquals(true, r.isMetadataOnly());
        assertFails(Status.INVALID_FIELD, "a metadata-only read is served only where the connection says so"
                + " (HostConnection.readsMetadataOnly)", RequestCheck.validate(r, V, LIMIT));
        assertNull(RequestCheck.validate(r, V, LIMIT, true));
        assertFails(Status.INVALID_FIELD, "a metadata-only read of 8 blocks of 4096+8 needs a writable metadata list"
                + " of 64 bytes", RequestCheck.validate(BlockRequest.readMetadata("v1", 0, 8, bytes(63)), V, LIMIT, true));
        assertFails(Status.INVALID_FIELD, "a metadata-only read of 1 blocks of 4096+0 needs a writable metadata list"
                + " of 0 bytes", RequestCheck.validate(BlockRequest.readMetadata("n", 0, 1, bytes(0)), NO_META, LIMIT, true));
        assertEquals(false, BlockRequest.read("v1", 0, 1, bytes(4096), bytes(8), Protection.NONE).isMetadataOnly());
    }
}
