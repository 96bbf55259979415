package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import org.junit.jupiter.api.Test;

/** The NBD error an engine failure earns: a full store is ENOSPC, which a client may wait out. */
class OutcomeStatusTest {
    @Test
    void aFullStoreIsEnospcAndAMediaErrorEio() {
        assertEquals(NbdProtocol.ENOSPC, Outcome.of(Completion.failure(Status.NO_SPACE,
                "WRITE lba=2: No space left on device"), 8192, 4096, 4096).error);
        assertEquals(NbdProtocol.EIO, Outcome.of(Completion.failure(Status.MEDIA_ERROR, "WRITE lba=2: Input/output error"),
                8192, 4096, 4096).error);
    }
}
