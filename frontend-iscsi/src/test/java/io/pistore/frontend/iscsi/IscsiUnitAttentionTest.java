package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unit attentions per I_T nexus and resets that reach every session, with two initiators on
 * loopback: a LOGICAL UNIT RESET or TARGET WARM RESET from one aborts the other's tasks (answered
 * TASK ABORTED, TAS 1) and gives both POWER ON, RESET; INQUIRY and REPORT LUNS pass a unit
 * attention by, REQUEST SENSE returns and clears it; PREEMPT and CLEAR tell the nexuses they
 * removed; CLEAR TASK SET and PREEMPT AND ABORT answer the other sessions' tasks TASK ABORTED, and
 * the control page shows TAS 1, not changeable; a live resize tells every session CAPACITY DATA HAS
 * CHANGED and READ CAPACITY shows the new size; and a server of two workers runs two full windows of
 * commands that need a worker, every one answered.
 */
@Timeout(60)
class IscsiUnitAttentionTest extends IscsiLoopbackFixture {
    static final int CLEAR_TASK_SET = 4;

    IscsiTestInitiator open(String name) throws IOException {
        return loginAs(name, "v", "ImmediateData", "Yes", "InitialR2T", "Yes");
    }

    @Test
    void aResetFromOneSessionAbortsTheOthersTasksAndBothSeeIt() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            assertEquals(GOOD, run6(b, 0x16), "b's SPC-2 reservation");
            // b's write waits for its data when a resets the unit
            int write = b.submit(cdb10(0x2A, 5, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2t = b.next();
            assertEquals(Pdu.R2T, r2t.opcode());
            int tmf = a.taskManagement(IscsiTaskSetTest.LOGICAL_UNIT_RESET, Pdu.RESERVED_TAG, 0);
            Pdu p = a.next();
            assertEquals(tmf, p.itt());
            assertEquals(0, p.u8(2), "function complete");
            Pdu aborted = b.next();
            assertEquals(Pdu.SCSI_RESPONSE, aborted.opcode(), "TAS 1: b's write is answered");
            assertEquals(write, aborted.itt());
            assertEquals(ScsiResult.TASK_ABORTED, aborted.u8(3), "TASK ABORTED");
            b.dataOut(write, r2t.i32(20), 0, block(9)); // dropped: the task is gone
            IscsiTestInitiator.Result inq = b.command(inquiry(), new byte[0], 0, 96, true);
            assertEquals(GOOD, inq.status(), "INQUIRY does not report a unit attention");
            byte[] luns = new byte[12];
            luns[0] = (byte) 0xA0;
            luns[9] = 16;
            assertEquals(GOOD, b.command(luns, new byte[0], 0, 16, true).status(), "nor REPORT LUNS");
            assertUnitAttention(0x2900, tur(b));
            assertEquals(GOOD, tur(b).status(), "reported once");
            byte[] rs = new byte[6];
            rs[0] = 0x03;
            rs[4] = 18;
            IscsiTestInitiator.Result sense = a.command(rs, new byte[0], 0, 18, true);
            assertEquals(GOOD, sense.status(), "REQUEST SENSE returns the issuer's unit attention");
            assertEquals(UNIT_ATTENTION, sense.dataIn()[2] & 0x0f);
            assertEquals(0x29, sense.dataIn()[12]);
            assertEquals(GOOD, tur(a).status(), "and clears it");
            assertEquals(GOOD, run6(a, 0x16), "the reset ended b's SPC-2 reservation");
            byte[] read = cdb10(0x28, 5, 1);
            IscsiTestInitiator.Result r = a.command(java.util.Arrays.copyOf(read, 10), new byte[0], 0, 512, true);
            assertEquals(GOOD, r.status());
            assertTrue(java.util.Arrays.equals(new byte[512], r.dataIn()), "the aborted write stored nothing");
        }
    }

    @Test
    void targetWarmResetTellsEverySession() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            int tmf = a.taskManagement(6, Pdu.RESERVED_TAG, 0);
            assertEquals(tmf, a.next().itt());
            byte[] read = java.util.Arrays.copyOf(cdb10(0x28, 0, 1), 10);
            assertUnitAttention(0x2900, b.command(read, new byte[0], 0, 512, true)); // a READ reports it too
            assertEquals(GOOD, b.command(read, new byte[0], 0, 512, true).status());
            assertUnitAttention(0x2900, tur(a));
            assertEquals(GOOD, tur(a).status());
        }
    }

    static byte[] inquiry() {
        byte[] c = new byte[6];
        c[0] = 0x12;
        c[4] = 96;
        return c;
    }

    @Test
    void preemptAndClearTellTheNexusesTheyRemoved() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            long ka = 0xA;
            long kb = 0xB;
            assertEquals(GOOD, prout(a, 0, 0, 0, ka, 0).status());
            assertEquals(GOOD, prout(b, 0, 0, 0, kb, 0).status());
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE, ka, 0, 0).status());
            assertEquals(GOOD, prout(b, 4, ScsiReservations.EXCLUSIVE_ACCESS, kb, ka, 0).status());
            assertUnitAttention(0x2A05, tur(a)); // REGISTRATIONS PREEMPTED
            assertEquals(GOOD, tur(b).status(), "the preempting nexus has none");
            assertEquals(GOOD, prout(a, 0, 0, 0, ka, 0).status(), "a registers again");
            assertEquals(GOOD, prout(b, 3, 0, kb, 0, 0).status(), "CLEAR");
            assertUnitAttention(0x2A03, tur(a)); // RESERVATIONS PREEMPTED
            assertEquals(GOOD, tur(b).status());

            assertEquals(GOOD, prout(a, 0, 0, 0, ka, 0).status());
            assertEquals(GOOD, prout(b, 0, 0, 0, kb, 0).status());
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, ka, 0, 0)
                    .status());
            assertEquals(GOOD, prout(a, 2, ScsiReservations.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, ka, 0, 0)
                    .status(), "RELEASE");
            assertUnitAttention(0x2A04, tur(b)); // RESERVATIONS RELEASED
            assertEquals(GOOD, tur(a).status());
            assertEquals(GOOD, prout(a, 3, 0, ka, 0, 0).status());
        }
    }

    @Test
    void clearTaskSetAnswersTheOtherSessionsTasksTaskAbortedAndNotItsOwn() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            int theirs = b.submit(cdb10(0x2A, 5, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2tB = b.next();
            assertEquals(Pdu.R2T, r2tB.opcode());
            int mine = a.submit(cdb10(0x2A, 6, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2tA = a.next();
            assertEquals(Pdu.R2T, r2tA.opcode());
            int tmf = a.taskManagement(CLEAR_TASK_SET, Pdu.RESERVED_TAG, 0);
            Pdu p = a.next();
            assertEquals(Pdu.TASK_MGMT_RESPONSE, p.opcode());
            assertEquals(tmf, p.itt());
            assertEquals(0, p.u8(2), "function complete");
            Pdu aborted = b.next();
            assertEquals(Pdu.SCSI_RESPONSE, aborted.opcode());
            assertEquals(theirs, aborted.itt());
            assertEquals(ScsiResult.TASK_ABORTED, aborted.u8(3), "the other session's task: TASK ABORTED");
            b.dataOut(theirs, r2tB.i32(20), 0, block(5)); // dropped
            a.dataOut(mine, r2tA.i32(20), 0, block(6)); // dropped
            assertEquals(GOOD, tur(b).status(), "TAS 1: no unit attention besides the status");
            assertEquals(GOOD, tur(a).status(), "the issuer's own task is never answered: this is TUR's");
            for (int lba : new int[] {5, 6}) {
                IscsiTestInitiator.Result r = a.command(java.util.Arrays.copyOf(cdb10(0x28, lba, 1), 10), new byte[0], 0,
                        512, true);
                assertTrue(java.util.Arrays.equals(new byte[512], r.dataIn()), "nothing stored at " + lba);
            }
        }
    }

    @Test
    void preemptAndAbortAnswersThePreemptedSessionsTasksTaskAborted() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            long ka = 0xA;
            long kb = 0xB;
            assertEquals(GOOD, prout(a, 0, 0, 0, ka, 0).status());
            assertEquals(GOOD, prout(b, 0, 0, 0, kb, 0).status());
            assertEquals(GOOD, prout(b, 1, ScsiReservations.WRITE_EXCLUSIVE, kb, 0, 0).status());
            int write = b.submit(cdb10(0x2A, 7, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2t = b.next();
            assertEquals(Pdu.R2T, r2t.opcode());
            assertEquals(GOOD, prout(a, 5, ScsiReservations.EXCLUSIVE_ACCESS, ka, kb, 0).status(), "PREEMPT AND ABORT");
            Pdu aborted = b.next();
            assertEquals(write, aborted.itt());
            assertEquals(ScsiResult.TASK_ABORTED, aborted.u8(3));
            b.dataOut(write, r2t.i32(20), 0, block(7)); // dropped
            assertUnitAttention(0x2A05, tur(b)); // REGISTRATIONS PREEMPTED
            assertEquals(CONFLICT, read(b), "a holds Exclusive Access now");
            assertTrue(log.stream().anyMatch(l -> l.contains("PREEMPT AND ABORT") && l.contains("1 task(s)")), log.toString());
            assertEquals(GOOD, prout(a, 3, 0, ka, 0, 0).status());
        }
    }

    @Test
    void theControlPageShowsTasOneAndModeSelectKeepsIt() throws Exception {
        try (IscsiTestInitiator a = open("a")) {
            byte[] sense = new byte[6];
            sense[0] = 0x1A;
            sense[1] = 0x08; // DBD
            sense[2] = 0x0A;
            sense[4] = (byte) 255;
            IscsiTestInitiator.Result r = a.command(sense, new byte[0], 0, 255, true);
            assertEquals(GOOD, r.status());
            byte[] page = java.util.Arrays.copyOfRange(r.dataIn(), 4, 16);
            assertEquals(0x0A, page[0]);
            assertEquals(0x40, page[5] & 0x40, "TAS");
            sense[2] = 0x4A; // changeable values
            byte[] changeable = a.command(sense, new byte[0], 0, 255, true).dataIn();
            assertEquals(0, changeable[4 + 5] & 0x40, "TAS is not changeable");
            byte[] select = new byte[6];
            select[0] = 0x15;
            select[1] = 0x10; // PF
            select[4] = 16;
            byte[] list = new byte[16];
            System.arraycopy(page, 0, list, 4, 12);
            assertEquals(GOOD, a.command(select, list, 16, 16, false).status(), "the current values are taken");
            list[4 + 5] &= ~0x40;
            IscsiTestInitiator.Result off = a.command(select, list, 16, 16, false);
            assertEquals(CHECK, off.status());
            assertEquals(0x2600, off.ascq(), "TAS 0: INVALID FIELD IN PARAMETER LIST");
        }
    }

    @Test
    void aLiveResizeTellsEverySessionTheNewCapacity() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            assertEquals(64 - 1, Pdu.getInt(readCapacity(a).dataIn(), 0));
            store.resize("v", 128);
            server.volumeChanged("v");
            assertUnitAttention(0x2A09, tur(a)); // CAPACITY DATA HAS CHANGED
            assertUnitAttention(0x2A09, readCapacity(b));
            assertEquals(128 - 1, Pdu.getInt(readCapacity(a).dataIn(), 0));
            assertEquals(128 - 1, Pdu.getInt(readCapacity(b).dataIn(), 0));
            byte[] write = java.util.Arrays.copyOf(cdb10(0x2A, 100, 1), 10);
            assertEquals(GOOD, a.command(write, block(1), 512, 512, false).status(),
                    "a block past the old end");
        }
    }

    static IscsiTestInitiator.Result readCapacity(IscsiTestInitiator c) throws IOException {
        byte[] cdb = new byte[10];
        cdb[0] = 0x25;
        return c.command(cdb, new byte[0], 0, 8, true);
    }

    @Test
    void twoWorkersRunTwoFullWindowsWithoutDroppingACommand() throws Exception {
        serve(new IscsiServer.Options().workerThreads(2));
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            Set<Integer> tagsA = new HashSet<>();
            Set<Integer> tagsB = new HashSet<>();
            // VERIFY and SYNCHRONIZE CACHE run on the workers (a plain READ or WRITE may start on the
            // connection's own thread)
            for (int i = 0; i < IscsiTaskSet.WINDOW; i++) {
                tagsA.add(a.submit(cdb10(0x2F, i, 1), new byte[0], 0, false, IscsiTask.SIMPLE));
                tagsB.add(b.submit(cdb10(0x35, i, 1), new byte[0], 0, false, IscsiTask.SIMPLE));
            }
            answered(a, tagsA);
            answered(b, tagsB);
            assertTrue(server.workerThreadsAlive() <= 2, server.workerThreadsAlive() + " workers");
        }
    }

    /** Reads PDUs until each of {@code tags} has its final answer with GOOD status. */
    static void answered(IscsiTestInitiator c, Set<Integer> tags) throws IOException {
        Set<Integer> left = new HashSet<>(tags);
        while (!left.isEmpty()) {
            Pdu p = c.next();
            boolean last = p.opcode() == Pdu.SCSI_RESPONSE || p.opcode() == Pdu.DATA_IN && (p.flags() & 0x01) != 0;
            if (last) {
                assertEquals(GOOD, p.u8(3));
                assertTrue(left.remove(p.itt()), "one answer per command");
            }
        }
    }
}
