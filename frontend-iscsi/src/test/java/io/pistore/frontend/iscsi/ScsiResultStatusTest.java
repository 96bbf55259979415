package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import org.junit.jupiter.api.Test;

/** The sense an engine failure earns: a full store is SBC's SPACE ALLOCATION FAILED WRITE PROTECT. */
class ScsiResultStatusTest {
    private static int[] keyAscAscq(ScsiResult r) {
        return new int[] {r.sense[2] & 0x0F, r.sense[12] & 0xFF, r.sense[13] & 0xFF};
    }

    @Test
    void aFullStoreIsSpaceAllocationFailed() {
        ScsiResult r = ScsiResult.of(Completion.failure(Status.NO_SPACE, "WRITE lba=2: No space left on device"), true);
        assertEquals(java.util.List.of(ScsiResult.DATA_PROTECT, 0x27, 0x07),
                java.util.Arrays.stream(keyAscAscq(r)).boxed().toList());
        ScsiResult media = ScsiResult.of(Completion.failure(Status.MEDIA_ERROR, "WRITE lba=2: Input/output error"), true);
        assertEquals(java.util.List.of(0x03, 0x0C, 0x00), java.util.Arrays.stream(keyAscAscq(media)).boxed().toList());
    }
}
