package io.pistore.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.spi.TransportOptions;
import org.junit.jupiter.api.Test;

/** Transport settings are checked against the providers on the class path before anything starts. */
class TransportsTest {
    private static String reason(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void settingsOfTransportsThatAreNotThereAreRefused() {
        assertEquals("option 'carrier.pigeons' names no transport on the class path (transports: local)",
                reason(() -> Transports.check(TransportOptions.NONE.with("carrier.pigeons", "3"))));
        assertEquals("option 'carrier.pigeons' names no transport on the class path (transports: local)",
                reason(() -> Transports.find("local", TransportOptions.NONE.with("carrier.pigeons", "3"))));
    }

    @Test
    void theLocalTransportTakesNoSettings() {
        TransportOptions bad = TransportOptions.NONE.with("local.queue", "jdk");
        assertEquals("unknown option 'local.queue' of transport local; it takes none",
                reason(() -> Transports.check(bad)));
        LocalTransportProvider p = new LocalTransportProvider();
        assertFalse(p.availability(bad).isAvailable());
        assertEquals("unknown option 'local.queue' of transport local; it takes none", p.availability(bad).cause());
        assertEquals("unknown option 'local.queue' of transport local; it takes none", reason(() -> p.create(bad)));
        assertTrue(p.options().isEmpty());
        assertTrue(Transports.describe(bad).contains("unavailable: local (unknown option 'local.queue'"),
                Transports.describe(bad));
    }

    @Test
    void noSettingsFindsTheTransport() {
        Transports.check(TransportOptions.NONE);
        assertEquals("local", Transports.find("local", TransportOptions.NONE).name());
        assertTrue(reason(() -> Transports.find("tcp", TransportOptions.NONE)).startsWith("unknown transport 'tcp'"));
    }
}
