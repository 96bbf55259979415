package io.pistore.app.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.Transports;
import org.junit.jupiter.api.Test;

/** How {@link Transports#find} explains a transport it cannot give (one line, the cause once). */
class UnavailableTransportTest {
    @Test
    void anUnavailableTransportNamesItsCauseOnceAndWhatIsAvailable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Transports.find("corrupting"));
        String m = e.getMessage();
        assertTrue(m.startsWith("transport 'corrupting' is unavailable: a test-only transport, switched off (available: "), m);
        assertTrue(m.contains("local"), m);
        assertEquals(m.indexOf("switched off"), m.lastIndexOf("switched off"), "the cause is said once: " + m);
        assertTrue(!m.contains("\n"), m);
    }

    @Test
    void anUnknownTransportListsEveryProviderWithItsState() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Transports.find("carrier-pigeon"));
        String m = e.getMessage();
        assertTrue(m.startsWith("unknown transport 'carrier-pigeon'; available: "), m);
        String unavailable = m.substring(m.indexOf("; unavailable: ") + 1);
        assertTrue(m.indexOf("local") < m.indexOf("; unavailable: "), m);
        assertTrue(unavailable.contains("corrupting (a test-only transport, switched off)"), m);
    }
}
