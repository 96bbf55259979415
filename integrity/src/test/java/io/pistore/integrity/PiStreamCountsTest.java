package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a {@link PiStream} counts and keeps: errors past the number kept, progress block by block,
 * zero-block transfers, a restart that forgets earlier errors, and the messages of its refusals.
 */
class PiStreamCountsTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final PiContext CTX = PiContext.builder(F).initialRefTag(5).appTag(0x77).build();

    /** {@code n} blocks with good PI, then the app tag of each block in {@code bad} changed. */
    private static byte[] blocks(int n, int... bad) {
        byte[] b = new byte[n * F.blockSize()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31);
        }
        Pi.generate(CTX, ScatterList.wrap(b), n);
        for (int k : bad) {
            b[k * F.blockSize() + F.dataSize() + 2] ^= 0x40;
        }
        return b;
    }

    @Test
    void everyBadBlockIsCountedAndTheFirstOnesKept() {
        PiStream v = PiStream.verifier(CTX, 8, 2);
        PiError first = v.update(ByteBuffer.wrap(blocks(8, 1, 4, 6, 7)));
        assertEquals(4, v.errorCount());
        List<PiError> kept = v.errors();
        assertEquals(2, kept.size());
        assertEquals(first, kept.get(0));
        assertEquals(first, v.firstError());
        assertEquals(new PiError(PiErrorKind.APP_TAG, 1, 0x77, 0x77 ^ 0x4000), kept.get(0));
        assertEquals(4, kept.get(1).blockIndex());
        assertThrows(UnsupportedOperationException.class, () -> v.errors().clear());
        assertEquals("must keep at least one error, not 0",
                assertThrows(IllegalArgumentException.class, () -> PiStream.verifier(CTX, 1, 0)).getMessage());
    }

    @Test
    void aChunkReportsTheFirstErrorInItOnly() {
        PiStream v = PiStream.verifier(CTX, 4, 4);
        byte[] b = blocks(4, 0, 2, 3);
        int bs = F.blockSize();
        PiError e1 = v.update(ByteBuffer.wrap(b, 0, 2 * bs));
        assertEquals(0, e1.blockIndex());
        PiError e2 = v.update(ByteBuffer.wrap(b, 2 * bs, 2 * bs));
        assertEquals(2, e2.blockIndex(), "the first error of this chunk, not of the stream");
        assertEquals(0, v.firstError().blockIndex());
        assertEquals(3, v.errorCount());
    }

    @Test
    void progressIsCountedByBlocksAndBytes() {
        PiStream g = PiStream.generator(CTX, 3);
        assertEquals(3L * F.blockSize(), g.expectedBytes());
        assertFalse(g.isComplete());
        g.update(ByteBuffer.allocate(F.blockSize() + 10));
        assertEquals(1, g.blocksDone());
        assertEquals(F.blockSize() + 10L, g.bytesSeen());
        assertFalse(g.isComplete());
        g.update(ByteBuffer.allocate(2 * F.blockSize() - 11));
        assertEquals(2, g.blocksDone());
        assertFalse(g.isComplete(), "one byte short");
        assertEquals("chunk of 2 bytes runs past the end of the stream: 1 bytes remain of 3 blocks",
                assertThrows(IllegalStateException.class, () -> g.update(ByteBuffer.allocate(2))).getMessage());
        assertNull(g.update(ByteBuffer.allocate(1)), "exactly what remains is taken");
        assertTrue(g.isComplete());
        assertEquals(3, g.blocksDone());
    }

    @Test
    void aStreamOfNoBlocksIsCompleteAtOnce() {
        PiStream g = PiStream.generator(CTX, 0);
        assertTrue(g.isComplete());
        assertEquals(0, g.expectedBytes());
        assertNull(g.update(ByteBuffer.allocate(0)));
        assertEquals("block count must not be negative: -1",
                assertThrows(IllegalArgumentException.class, () -> g.restart(CTX, -1)).getMessage());
        assertEquals("block count must not be negative: -1",
                assertThrows(IllegalArgumentException.class, () -> PiStream.verifier(CTX, -1)).getMessage());
    }

    @Test
    void aRestartForgetsTheErrorsOfTheLastTransfer() {
        PiStream v = PiStream.verifier(CTX, 2, 2);
        v.update(ByteBuffer.wrap(blocks(2, 0, 1)));
        assertEquals(2, v.errorCount());
        v.restart(CTX, 2);
        assertEquals(0, v.errorCount());
        assertTrue(v.errors().isEmpty());
        assertNull(v.firstError());
        assertNull(v.update(ByteBuffer.wrap(blocks(2))));
        assertEquals(0, v.errorCount());
        assertTrue(v.errors().isEmpty());
        assertTrue(v.isComplete());
    }

    @Test
    void blocksWithoutPiAreCountedToo() {
        BlockFormat plain = BlockFormat.of(512, 0);
        PiStream v = PiStream.verifier(PiContext.builder(plain).build(), 3);
        assertNull(v.update(ByteBuffer.allocate(700)));
        assertEquals(1, v.blocksDone());
        assertEquals(700, v.bytesSeen());
        assertNull(v.update(ByteBuffer.allocate(836)));
        assertTrue(v.isComplete());
        assertEquals(0, v.errorCount());
    }
}
