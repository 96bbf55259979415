package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.net.PolitePoll;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * How a connection's thread waits for the next command: an initiator that sends one command at a
 * time is polled for (its next command is caught without a kernel wake-up) and an idle connection
 * stops polling; a pipelining one, whose commands come in bursts, is not polled for; with polling
 * off it blocks. Every command's answer is checked.
 */
class IscsiCommandWaitTest extends IscsiLoopbackFixture {
    /** 200 writes and 200 reads, one at a time, each read returning what the write before it stored. */
    private static void depthOneTraffic(IscsiTestInitiator c, int round) throws IOException {
        for (int i = 0; i < 200; i++) {
            byte[] b = block(round * 1000L + i);
            byte[] cdb = Arrays.copyOf(cdb10(0x2A, i % 64, 1), 10);
            assertEquals(GOOD, c.command(cdb, b, 512, 512, false).status(), "write " + i);
            IscsiTestInitiator.Result r = c.command(Arrays.copyOf(cdb10(0x28, i % 64, 1), 10), new byte[0], 0, 512, true);
            assertEquals(GOOD, r.status(), "read " + i);
            assertArrayEquals(b, r.dataIn(), "read " + i);
        }
    }

    @Test
    void aConnectionAtDepthOneCatchesCommandsPollingAndStopsWhenIdle() throws Exception {
        // A 10 ms cap: the gaps of this initiator's depth-1 loop are far shorter, so the loop polls.
        serve(options().spinMicros(10_000));
        try (IscsiTestInitiator c = login("v")) {
            // On a busy machine a round's gaps can all outlast the cap (the thread lost its CPU):
            // more rounds, until one is caught, bounded.
            PolitePoll.Counts w = server.waitCounters();
            for (int round = 0; round < 20 && w.caught() == 0; round++) {
                depthOneTraffic(c, round);
                w = server.waitCounters();
            }
            assertTrue(w.polls() > 0 && w.caught() > 0, "commands caught while polling: " + w);
            // An idle connection neither polls nor wakes: its counters stop, and stay so for 300 ms.
            Eventually.steady("the idle connection to block", Duration.ofMillis(300), Duration.ofSeconds(10),
                    server::waitCounters);
            depthOneTraffic(c, 99); // and serves again after being idle
        }
    }

    /**
     * Writes one at a time whose data the target solicits (ImmediateData=No): the Data-Out after each
     * R2T is waited for polling too, as the next command is, since no command then waits for
     * anything but the initiator. Each write stores its block.
     */
    @Test
    void theDataOutOfAWriteAtDepthOneIsPolledFor() throws Exception {
        serve(options().spinMicros(10_000));
        try (IscsiTestInitiator c = login("v", "ImmediateData", "No")) {
            int writes = 100;
            long best = 0;
            // as above, rounds until one shows it (a round whose thread lost its CPU catches less), bounded
            for (int round = 0; round < 20 && best <= writes; round++) {
                long before = server.waitCounters().caught();
                for (int i = 0; i < writes; i++) {
                    byte[] b = block(round * 1000L + i);
                    IscsiTestInitiator.Result w = c.command(Arrays.copyOf(cdb10(0x2A, i % 64, 1), 10), b, 0, 512, false);
                    assertEquals(GOOD, w.status(), "write " + i);
                    assertEquals(1, w.r2ts(), "its data solicited");
                    IscsiTestInitiator.Result r = c.command(Arrays.copyOf(cdb10(0x28, i % 64, 1), 10), new byte[0], 0, 512, true);
                    assertArrayEquals(b, r.dataIn(), "block " + i);
                }
                best = Math.max(best, server.waitCounters().caught() - before);
            }
            // 3 waits a write and its read: 2 commands and the Data-Out between; over 2 a pair, the Data-Out's too
            assertTrue(best > 2L * writes, "waits caught while polling in the best round: " + best + " of " + 3 * writes);
        }
    }

    @Test
    void aPipeliningInitiatorIsNotPolledFor() throws Exception {
        serve(options().spinMicros(10_000));
        try (IscsiTestInitiator c = login("v")) {
            for (int round = 0; round < 50; round++) {
                c.hold();
                for (int i = 0; i < 16; i++) {
                    c.submit(cdb10(0x28, i, 1), new byte[0], 512, false, 0);
                }
                c.release();
                for (int done = 0; done < 16; ) {
                    Pdu p = c.next();
                    assertEquals(Pdu.DATA_IN, p.opcode());
                    if ((p.flags() & 0x01) != 0) {
                        assertEquals(GOOD, p.u8(3));
                        done++;
                    }
                }
            }
            PolitePoll.Counts w = server.waitCounters();
            assertEquals(0, w.polls(), "bursts of 16 commands are waited for blocking (or found in): " + w);
        }
    }

    @Test
    void withPollingOffTheConnectionNeverPolls() throws Exception {
        serve(options().spinMicros(0));
        try (IscsiTestInitiator c = login("v")) {
            depthOneTraffic(c, 0);
            PolitePoll.Counts w = server.waitCounters();
            assertEquals(0, w.polls(), "never polls: " + w);
            // it blocks for each command not in yet when the answer before it has left
            assertTrue(w.blockingWaits() > 0, "blocking waits: " + w);
        }
    }
}
