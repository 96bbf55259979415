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
     * A write whose data the target solicited waits only for the initiator, as an answered command
     * does: while one waits for its Data-Out, the commands that come one at a time are still polled
     * for (were the set required empty, not one would be). Then its data comes, and it is stored.
     */
    @Test
    void aWriteWaitingForItsDataOutLeavesTheConnectionPolling() throws Exception {
        serve(options().spinMicros(10_000));
        try (IscsiTestInitiator c = login("v")) {
            byte[] held = block(7);
            int write = c.submit(Arrays.copyOf(cdb10(0x2A, 63, 1), 10), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2t = c.next();
            assertEquals(Pdu.R2T, r2t.opcode(), "the write's data is solicited");
            long polls = server.waitCounters().polls();
            for (int round = 0; round < 20 && server.waitCounters().polls() == polls; round++) {
                for (int i = 0; i < 100; i++) {
                    IscsiTestInitiator.Result r = c.command(Arrays.copyOf(cdb10(0x28, i % 63, 1), 10), new byte[0], 0, 512,
                            true);
                    assertEquals(GOOD, r.status(), "read " + i);
                }
            }
            assertTrue(server.waitCounters().polls() > polls, "polled while the write waits: " + server.waitCounters());
            c.dataOut(write, r2t.i32(20), 0, held);
            Pdu done = c.next();
            assertEquals(Pdu.SCSI_RESPONSE, done.opcode());
            assertEquals(write, done.itt());
            assertEquals(GOOD, done.u8(3));
            IscsiTestInitiator.Result back = c.command(Arrays.copyOf(cdb10(0x28, 63, 1), 10), new byte[0], 0, 512, true);
            assertArrayEquals(held, back.dataIn(), "the write's block");
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
