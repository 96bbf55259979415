package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** A cause in one readable line: the innermost cause's first line, at most 300 characters of it. */
class ReplicationExceptionTest {
    @Test
    void theInnermostCausesFirstLine() {
        Exception e = new CompletionException(new IllegalStateException("outer", new java.io.IOException("disk full\nmore")));
        assertEquals("disk full", ReplicationException.oneLine(e));
        assertEquals("IllegalStateException", ReplicationException.oneLine(new IllegalStateException()));
    }

    @Test
    void aCauseCarryingAWholeLogEntryIsCut() {
        String entry = "gap between entry term: 1; index: 498; logData: \"" + "\\001\\002".repeat(2000) + "\"";
        String line = ReplicationException.oneLine(new IllegalStateException(entry));
        assertTrue(line.startsWith("gap between entry term: 1; index: 498; ") && line.length() < 340
                && line.endsWith("... (" + (entry.length() - 300) + " characters more)"), line);
    }
}
