package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.Availability;
import org.junit.jupiter.api.Test;

/**
 * The real probe and the real ops, as pistore's launcher runs them: surefire passes the launcher's
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} (transport-rdma's pom), so the probe gets
 * past the export check to its later steps and answers with the cause this machine has: no libdisni
 * (no RDMA software) or, with libdisni installed, no RDMA device.
 */
class RealDisniProbeTest {
    @Test
    void theLaunchersExportIsInPlace() {
        assertTrue(DisniProbe.REAL.sunNioChExported(),
                "tests must run with --add-exports java.base/sun.nio.ch=ALL-UNNAMED, as the launcher does");
    }

    @Test
    void theRealProbeReachesTheLibraryOrDeviceStep() {
        Availability a = DisniProbe.run(DisniProbe.REAL);
        if (a.isAvailable()) {
            return; // a machine with libdisni and an RDMA device: nothing to refuse
        }
        String cause = a.cause();
        assertFalse(cause.contains("--add-exports"), cause);
        assertTrue(cause.startsWith("libdisni not found (") || cause.startsWith("no RDMA device ("), cause);
        assertFalse(cause.contains("\n"), cause);
    }

    @Test
    void realOpsFailAtTheNativeLibraryWhenTheProbeFoundNone() {
        Availability a = DisniProbe.run(DisniProbe.REAL);
        if (!a.isAvailable() && a.cause().startsWith("libdisni not found")) {
            // RealDisniOps is never used then; if it were, its first native call fails to link
            Throwable t = assertThrows(Throwable.class, () -> new RealDisniOps().createEventChannel());
            assertTrue(t instanceof LinkageError, t.toString());
            assertTrue(String.valueOf(t.getMessage()).contains("disni")
                    || String.valueOf(t.getMessage()).contains("NativeDispatcher"), t.toString());
        }
    }
}
