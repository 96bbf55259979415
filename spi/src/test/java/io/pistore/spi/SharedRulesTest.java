package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The rules every hop shares, each written once: the request checks ({@link RequestCheck}), the
 * status of a PI error kind ({@link Status#of}), protection to PI context
 * ({@link Protection#context}) and the reference tag of an LBA ({@link BlockFormat#refTagOf}).
 */
class SharedRulesTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private static final VolumeInfo V = new VolumeInfo("v1", 1000, F);
    private static final long LIMIT = 8 * (4096 + 8);

    @Test
    void aHeaderWithinTheVolumeAndTheLimitPasses() {
        assertNull(RequestCheck.validateHeader(Operation.READ, 992, 8, Protection.insertStrip(992), V, LIMIT));
        assertNull(RequestCheck.validateHeader(Operation.WRITE, 0, 1, Protection.NONE, V, LIMIT));
    }

    @Test
    void theBlockCountMustBeOneToIntMax() {
        for (long blocks : new long[] {0, -1, Integer.MAX_VALUE + 1L, 0xFFFFFFFFL}) {
            Completion c = RequestCheck.validateHeader(Operation.READ, 0, blocks, Protection.NONE, V, Long.MAX_VALUE);
            assertEquals(Status.INVALID_FIELD, c.status(), "blocks " + blocks);
            assertTrue(c.message().contains("not " + blocks), c.message());
        }
    }

    @Test
    void anLbaRangeBeyondTheVolumeIsOutOfRange() {
        for (long[] lbaBlocks : new long[][] {{993, 8}, {1000, 1}, {-1, 1}, {Long.MAX_VALUE - 2, 8}}) {
            Completion c = RequestCheck.validateHeader(Operation.WRITE_ZEROES, lbaBlocks[0], lbaBlocks[1],
                    Protection.NONE, V, LIMIT);
            assertEquals(Status.LBA_OUT_OF_RANGE, c.status(), c.toString());
            assertTrue(c.message().contains("beyond the 1000 blocks of volume v1"), c.message());
        }
    }

    @Test
    void theTransferLimitCountsDataAndMetadataOfReadsAndWritesOnly() {
        Completion c = RequestCheck.validateHeader(Operation.READ, 0, 9, Protection.NONE, V, LIMIT);
        assertEquals(Status.INVALID_FIELD, c.status());
        assertEquals("9 blocks exceed the largest transfer of " + LIMIT + " bytes", c.message());
        // Exactly at the limit passes: the limit is data plus metadata, not data alone.
        assertNull(RequestCheck.validateHeader(Operation.WRITE, 0, 8, Protection.NONE, V, LIMIT));
        assertEquals(Status.INVALID_FIELD,
                RequestCheck.validateHeader(Operation.WRITE, 0, 8, Protection.NONE, V, LIMIT - 1).status());
        // Write-zeroes and deallocate move no data: no transfer limit.
        assertNull(RequestCheck.validateHeader(Operation.WRITE_ZEROES, 0, 1000, Protection.NONE, V, LIMIT));
        assertNull(RequestCheck.validateHeader(Operation.DEALLOCATE, 0, 1000, Protection.NONE, V, LIMIT));
    }

    @Test
    void flushNeedsNoRange() {
        assertNull(RequestCheck.validateHeader(Operation.FLUSH, -5, 0, Protection.NONE, V, 0));
        assertNull(RequestCheck.validate(BlockRequest.flush("v1"), V, 0));
    }

    @Test
    void theInitialRefTagMustFitTheFormatsRefTag() {
        Protection wide = Protection.pass(CheckFlags.ALL, 1L << 32, 0, 0);
        Completion c = RequestCheck.validateHeader(Operation.READ, 0, 1, wide, V, LIMIT);
        assertEquals(Status.INVALID_FIELD, c.status());
        assertTrue(c.message().contains("does not fit the 32-bit reference tag"), c.message());
        // A 64-bit guard has a 48-bit ref tag; a volume without PI has none to fit.
        VolumeInfo crc64 = new VolumeInfo("w", 1000, BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_1,
                PiLocation.FIRST));
        assertNull(RequestCheck.validateHeader(Operation.READ, 0, 1, wide, crc64, 1 << 20));
        assertEquals(Status.INVALID_FIELD, RequestCheck.validateHeader(Operation.READ, 0, 1,
                Protection.pass(CheckFlags.ALL, 1L << 48, 0, 0), crc64, 1 << 20).status());
        VolumeInfo noPi = new VolumeInfo("n", 1000, BlockFormat.of(4096, 0));
        assertNull(RequestCheck.validateHeader(Operation.READ, 0, 1, wide, noPi, LIMIT));
    }

    @Test
    void validateAddsTheBufferChecksToTheHeaderChecks() {
        ScatterList data = ScatterList.of(ByteBuffer.allocate(4096));
        ScatterList meta = ScatterList.of(ByteBuffer.allocate(8));
        assertNull(RequestCheck.validate(BlockRequest.write("v1", 0, 1, data, meta, Protection.pass(CheckFlags.ALL, 0, 0, 0),
                false), V, LIMIT));
        Completion shortData = RequestCheck.validate(BlockRequest.read("v1", 0, 2, data, null,
                Protection.insertStrip(0)), V, LIMIT);
        assertEquals(Status.INVALID_FIELD, shortData.status());
        assertTrue(shortData.message().startsWith("data buffer holds 4096 bytes"), shortData.message());
        Completion noMeta = RequestCheck.validate(BlockRequest.write("v1", 0, 1, data, null,
                Protection.pass(CheckFlags.ALL, 0, 0, 0), false), V, LIMIT);
        assertTrue(noMeta.message().contains("must carry its metadata"), noMeta.message());
        Completion readOnly = RequestCheck.validate(BlockRequest.read("v1", 0, 1,
                ScatterList.of(ByteBuffer.allocate(4096).asReadOnlyBuffer()), null, Protection.insertStrip(0)), V, LIMIT);
        assertEquals("a read needs writable buffers", readOnly.message());
        // The header checks come first: an out-of-range request with a short buffer is out of range.
        assertEquals(Status.LBA_OUT_OF_RANGE, RequestCheck.validate(BlockRequest.read("v1", 999, 2, data, null,
                Protection.insertStrip(999)), V, LIMIT).status());
    }

    @Test
    void eachPiErrorKindHasOneStatusAndBack() {
        for (PiErrorKind k : PiErrorKind.values()) {
            Status s = Status.of(k);
            assertTrue(s.isPiError(), s.toString());
            assertSame(k, s.piErrorKind());
        }
        assertEquals(Status.GUARD_CHECK, Status.of(PiErrorKind.GUARD));
        assertEquals(Status.APP_TAG_CHECK, Status.of(PiErrorKind.APP_TAG));
        assertEquals(Status.REF_TAG_CHECK, Status.of(PiErrorKind.REF_TAG));
        for (Status s : Status.values()) {
            if (!s.isPiError()) {
                assertNull(s.piErrorKind(), s.toString());
            }
        }
    }

    @Test
    void protectionBecomesTheContextWithItsFields() {
        Protection p = Protection.pass(CheckFlags.of(true, false, true), 0x1234, 0xBEEF, 0xFF00);
        PiContext ctx = p.context(F);
        assertSame(F, ctx.format());
        assertEquals(p.checks(), ctx.checks());
        assertEquals(0x1234, ctx.initialRefTag());
        assertEquals(0xBEEF, ctx.appTag());
        assertEquals(0xFF00, ctx.appMask());
        assertEquals(0x1236, ctx.refTag(2));
    }

    @Test
    void insertStripOfAnLbaUsesItsRefTagOrNothingWithoutPi() {
        Protection p = Protection.insertStrip(F, (1L << 32) + 7);
        assertTrue(p.pract());
        assertEquals(7, p.initialRefTag());
        assertSame(Protection.NONE, Protection.insertStrip(BlockFormat.of(512, 0), 7));
    }

    @Test
    void theRefTagOfAnLbaIsItsLowBitsAgainstAReference() {
        BlockFormat crc64 = BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_1, PiLocation.FIRST);
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 1000; i++) {
            long lba = r.nextLong() >>> (1 + r.nextInt(63));
            assertEquals(lba % (1L << 32), F.refTagOf(lba), "lba " + lba);
            assertEquals(lba % (1L << 48), crc64.refTagOf(lba), "lba " + lba);
        }
    }

    @Test
    void theTransferLimitIsEightMebibytes() {
        assertEquals(8 * 1024 * 1024, TransportCapabilities.MAX_TRANSFER_BYTES);
        assertThrows(IllegalArgumentException.class, () -> new Protection(false, CheckFlags.NONE, 0, 0x10000, 0));
    }
}
