package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bytes parsed from a peer's frame are views into the frame's array, starting past its beginning:
 * whatever reads them must count positions from the view's start, not the array's.
 */
class ViewedBytesTest {
    /** {@code s} as a view that starts {@code at} bytes into a larger array, as a parsed field is. */
    private static ByteString viewed(ByteString s, int at) {
        byte[] a = new byte[at + s.size() + 7];
        new Random(at).nextBytes(a);
        s.copyTo(a, at);
        return UnsafeByteOperations.unsafeWrap(a, at, s.size());
    }

    @Test
    void anEntrysDataIsKeptWhenItsHeaderIsAView(@TempDir Path dir) throws Exception {
        byte[] d = new byte[4096];
        new Random(1).nextBytes(d);
        ByteString data = ByteString.copyFrom(d);
        try (EntryData log = EntryData.open(dir, 1 << 20)) {
            ByteString header = viewed(EntryData.header(data), 13);
            log.write(5, header, viewed(data, 29)).get();
            assertEquals(data, log.read(5, header));
        }
    }

    @Test
    void aBatchsOutcomesAreReadFromAView() {
        List<ApplyOutcome> outcomes = List.of(ApplyOutcome.done(), ApplyOutcome.miscompare(4100),
                ApplyOutcome.refused(9, new PiError(PiErrorKind.GUARD, 3, 0x1234, 0x4321)), ApplyOutcome.failed("no room"));
        ByteString reply = viewed(ApplyOutcome.encodeAll(outcomes).getContent(), 41);
        List<ApplyOutcome> back = ApplyOutcome.decodeAll(reply, outcomes.size());
        assertEquals(outcomes.size(), back.size());
        for (int i = 0; i < outcomes.size(); i++) {
            assertEquals(outcomes.get(i).describe(), back.get(i).describe());
        }
    }
}
