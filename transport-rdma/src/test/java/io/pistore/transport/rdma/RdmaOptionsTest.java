package io.pistore.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.GuardType;
import io.pistore.spi.Availability;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The rdma options reach the provider choice, the PI mode and the verbs provider's device through
 * the SPI: no system property is read.
 */
class RdmaOptionsTest {
    private final RdmaTransportProvider provider = new RdmaTransportProvider();

    @Test
    void theTransportDeclaresItsOwnOptionsAndEachVerbsProvidersOptions() {
        List<String> names = provider.options().stream().map(TransportOption::name).collect(Collectors.toList());
        assertEquals(List.of("rdma.provider", "rdma.pi"), names.subList(0, 2));
        assertTrue(names.containsAll(List.of("rdma.soft.integrity", "rdma.disni.local", "rdma.disni.maxQpWr")), names.toString());
        assertEquals(names.size(), names.stream().distinct().count(), "one name once: " + names);
    }

    @Test
    void hardwareGuardsFollowThePiModeAndTheSoftNicsSignatureEngine() {
        TransportOptions soft = TransportOptions.NONE.with("rdma.provider", "soft");
        assertEquals(EnumSet.of(GuardType.CRC16, GuardType.IP_CHECKSUM), provider.capabilities(soft).hardwareGuards());
        assertTrue(provider.capabilities(soft.with("rdma.pi", "cpu")).hardwareGuards().isEmpty());
        assertTrue(provider.capabilities(soft.with("rdma.soft.integrity", "false")).hardwareGuards().isEmpty());
        assertEquals(EnumSet.of(GuardType.CRC16, GuardType.IP_CHECKSUM),
                provider.capabilities(soft.with("rdma.pi", "offload")).hardwareGuards());
    }

    @Test
    void theSoftNicOpensWithOrWithoutIntegrityMrsAsTheOptionSays() throws Exception {
        TransportOptions noSig = TransportOptions.NONE.with("rdma.provider", "soft").with("rdma.soft.integrity", "false");
        RdmaOptions o = RdmaOptions.from(noSig, provider.options());
        assertEquals("soft", o.provider());
        assertEquals(RdmaOptions.PiMode.AUTO, o.pi());
        var p = (io.pistore.transport.rdma.verbs.VerbsProvider) RdmaTransportProvider.select(o);
        try (var dev = p.open(o.all())) {
            assertFalse(dev.caps().has(io.pistore.transport.rdma.verbs.Capability.INTEGRITY_MR));
        }
        try (var dev = p.open(TransportOptions.NONE)) {
            assertTrue(dev.caps().has(io.pistore.transport.rdma.verbs.Capability.INTEGRITY_MR));
        }
    }

    @Test
    void badSettingsAreRefusedInOneLine() {
        Availability a = provider.availability(TransportOptions.NONE.with("rdma.pi", "gpu"));
        assertFalse(a.isAvailable());
        assertEquals("rdma.pi must be auto, offload or cpu, not 'gpu'", a.cause());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> provider.create(TransportOptions.NONE.with("rdma.provder", "soft")));
        assertTrue(e.getMessage().startsWith("unknown option 'rdma.provder' of transport rdma; it takes: rdma.provider,"
                + " rdma.pi,"), e.getMessage());
        assertEquals("rdma.provider must be auto, soft or disni, not 'ucx'",
                assertThrows(IllegalArgumentException.class, () -> new RdmaOptions("ucx", RdmaOptions.PiMode.AUTO))
                        .getMessage());
        assertEquals("rdma.soft.integrity must be true or false, not 'on'",
                provider.availability(TransportOptions.NONE.with("rdma.soft.integrity", "on")).cause());
    }
}
