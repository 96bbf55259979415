package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.pistore.spi.WriteFence;
import org.junit.jupiter.api.Test;

/** Writes without a host's fence are numbered in the peer's own stream; a host's fence passes as it is. */
class OwnWritesTest {
    @Test
    void unfencedWritesGetTheNextNumberOfOneStreamAndAHostsFenceStays() {
        OwnWrites w = new OwnWrites();
        WriteFence a = w.numbered(null);
        WriteFence b = w.numbered(null);
        assertNotEquals(0, a.key());
        assertEquals(a.key(), b.key());
        assertEquals(1, a.epoch());
        assertEquals(1, a.seq());
        assertEquals(2, b.seq());
        WriteFence host = new WriteFence(9, 3, 77);
        assertSame(host, w.numbered(host));
        assertEquals(3, w.numbered(null).seq(), "a host's write takes no number of this stream");
        assertNotEquals(a.key(), new OwnWrites().numbered(null).key(), "each volume's peer has a stream of its own");
    }
}
