package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** The slot table on its own: command ids, lookup, and telling a reused slot's old id from its new one. */
class CommandSlotsTest {
    @Test
    void anIdIsTheSlotUnderItsGeneration() {
        CommandSlots<String> s = new CommandSlots<>(3);
        assertEquals(3, s.capacity());
        int a = s.claim("a");
        int b = s.claim("b");
        assertEquals(0x0001_0000, a, "slot 0, first use");
        assertEquals(0x0001_0001, b, "slot 1, first use");
        assertSame("a", s.find(a));
        assertSame("b", s.find(b));
        assertSame("b", s.at(1));
        assertNull(s.at(2));
    }

    @Test
    void aFreedSlotIsReusedUnderANewGenerationAndTheOldIdIsUnknown() {
        CommandSlots<String> s = new CommandSlots<>(2);
        int a = s.claim("a");
        s.release(a);
        assertNull(s.find(a), "freed");
        int c = s.claim("c");
        assertEquals(0x0002_0000, c, "the freed slot comes back first, one generation on");
        assertNull(s.find(a), "an earlier generation of a slot in use");
        assertSame("c", s.find(c));
    }

    @Test
    void idsOutsideTheTableAreUnknown() {
        CommandSlots<String> s = new CommandSlots<>(2);
        s.claim("a");
        assertNull(s.find(0x0001_0002), "slot 2 of a 2-slot table");
        assertNull(s.find(0x0001_FFFF));
        assertNull(s.find(0x0001_0001), "a slot never claimed");
        assertNull(s.find(0), "generation 0 before any wrap");
    }

    @Test
    void theGenerationWrapsAt16Bits() {
        CommandSlots<String> s = new CommandSlots<>(1);
        int id = 0;
        for (int i = 0; i < 0x10000; i++) {
            id = s.claim("x");
            s.release(id);
        }
        assertEquals(0, id, "the 65536th use of slot 0 is generation 0 again");
        assertEquals(0x0001_0000, s.claim("y"));
    }
}
