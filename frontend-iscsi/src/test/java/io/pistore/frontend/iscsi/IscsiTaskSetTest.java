package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A session's task set through a hand-written initiator on loopback: a full window of commands
 * pipelined and all answered, a HEAD OF QUEUE command answered while an older write still waits
 * for its data, an ORDERED read that sees the older write, and task management that aborts tasks
 * waiting for data or queued, so that they are never answered and store nothing.
 */
@Timeout(60)
class IscsiTaskSetTest extends IscsiLoopbackFixture {
    static final int ABORT_TASK = 1;
    static final int LOGICAL_UNIT_RESET = 5;

    @Override
    void createVolumes() throws IOException {
        store.create("v", BlockFormat.of(512, 8), 256);
    }

    IscsiTestInitiator open() throws IOException {
        return login("v", "InitialR2T", "Yes", "ImmediateData", "Yes");
    }

    static long window(Pdu p) {
        return (p.u32(32) - p.u32(28) + 1) & 0xFFFFFFFFL;
    }

    @Test
    void aFullWindowOfCommandsIsPipelinedAndAnswered() throws Exception {
        try (IscsiTestInitiator c = open()) {
            int ping = c.ping();
            Pdu first = c.next();
            assertEquals(Pdu.NOP_IN, first.opcode());
            assertEquals(ping, first.itt());
            assertEquals(IscsiTaskSet.WINDOW, window(first), "the window the initiator may fill");
            Set<Integer> writes = new HashSet<>();
            for (int i = 0; i < IscsiTaskSet.WINDOW; i++) {
                writes.add(c.submit(cdb10(0x2A, i, 1), block(i), 512, true, IscsiTask.SIMPLE));
            }
            long maxCmdSn = first.u32(32);
            for (int i = 0; i < IscsiTaskSet.WINDOW; i++) {
                Pdu r = c.next();
                assertEquals(Pdu.SCSI_RESPONSE, r.opcode());
                assertEquals(0, r.u8(3), "GOOD");
                assertTrue(writes.remove(r.itt()), "one answer per command");
                assertTrue(!IscsiTaskSet.serialBefore(r.u32(32), maxCmdSn), "MaxCmdSN never goes back");
                maxCmdSn = r.u32(32);
            }
            Map<Integer, Integer> reads = new HashMap<>();
            for (int i = 0; i < IscsiTaskSet.WINDOW; i++) {
                reads.put(c.submit(cdb10(0x28, i, 1), new byte[0], 512, false, IscsiTask.SIMPLE), i);
            }
            for (int i = 0; i < IscsiTaskSet.WINDOW; i++) {
                Pdu r = c.next();
                assertEquals(Pdu.DATA_IN, r.opcode());
                assertEquals(0x01, r.flags() & 0x01, "status with the only Data-In");
                assertArrayEquals(block(reads.remove(r.itt())), r.data);
            }
            c.ping();
            Pdu last = c.next();
            assertEquals(Pdu.NOP_IN, last.opcode());
            assertEquals(IscsiTaskSet.WINDOW, window(last), "the window is whole again once every command is answered");
            assertEquals(c.cmdSn(), last.u32(28));
        }
    }

    @Test
    void headOfQueueGoesFirstAndOrderedWaitsForTheOlderWrite() throws Exception {
        try (IscsiTestInitiator c = open()) {
            byte[] data = block(99);
            int write = c.submit(cdb10(0x2A, 5, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2t = c.next();
            assertEquals(Pdu.R2T, r2t.opcode());
            int read = c.submit(cdb10(0x28, 5, 1), new byte[0], 512, false, IscsiTask.ORDERED);
            int tur = c.submit(new byte[16], new byte[0], 0, false, IscsiTask.HEAD_OF_QUEUE);
            Pdu first = c.next();
            assertEquals(tur, first.itt(), "HEAD OF QUEUE is answered while the write waits for its data");
            assertEquals(Pdu.SCSI_RESPONSE, first.opcode());
            c.dataOut(write, r2t.i32(20), 0, data);
            Map<Integer, Pdu> answers = new HashMap<>();
            for (int i = 0; i < 2; i++) {
                Pdu p = c.next();
                answers.put(p.itt(), p);
            }
            assertEquals(0, answers.get(write).u8(3));
            assertArrayEquals(data, answers.get(read).data, "the ORDERED read ran after the older write");
        }
    }

    @Test
    void abortedTasksAreNeverAnsweredAndStoreNothing() throws Exception {
        try (IscsiTestInitiator c = open()) {
            int write = c.submit(cdb10(0x2A, 9, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            long writeSn = c.cmdSn() - 1;
            Pdu r2t = c.next();
            int read = c.submit(cdb10(0x28, 9, 1), new byte[0], 512, false, IscsiTask.ORDERED);
            long readSn = c.cmdSn() - 1;
            int tmf = c.taskManagement(ABORT_TASK, read, readSn);
            Pdu p = c.next();
            assertEquals(Pdu.TASK_MGMT_RESPONSE, p.opcode());
            assertEquals(tmf, p.itt());
            assertEquals(0, p.u8(2), "function complete: the queued read");
            tmf = c.taskManagement(ABORT_TASK, write, writeSn);
            p = c.next();
            assertEquals(tmf, p.itt());
            assertEquals(0, p.u8(2), "function complete: the write waiting for its data");
            c.dataOut(write, r2t.i32(20), 0, block(1)); // data of an aborted task is dropped
            int ping = c.ping();
            p = c.next();
            assertEquals(Pdu.NOP_IN, p.opcode(), "nothing answers the aborted tasks");
            assertEquals(ping, p.itt());

            int again = c.submit(cdb10(0x28, 9, 1), new byte[0], 512, false, IscsiTask.SIMPLE);
            long againSn = c.cmdSn() - 1;
            p = c.next();
            assertEquals(again, p.itt());
            assertArrayEquals(new byte[512], p.data, "the aborted write stored nothing");
            tmf = c.taskManagement(ABORT_TASK, again, againSn);
            p = c.next();
            assertEquals(tmf, p.itt());
            assertEquals(1, p.u8(2), "a task answered already does not exist");
        }
    }

    @Test
    void logicalUnitResetAbortsEveryTaskOfTheSession() throws Exception {
        try (IscsiTestInitiator c = open()) {
            int write = c.submit(cdb10(0x2A, 3, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            Pdu r2t = c.next();
            c.submit(cdb10(0x28, 3, 1), new byte[0], 512, false, IscsiTask.ORDERED);
            int tmf = c.taskManagement(LOGICAL_UNIT_RESET, Pdu.RESERVED_TAG, 0);
            Pdu p = c.next();
            assertEquals(tmf, p.itt());
            assertEquals(0, p.u8(2));
            c.dataOut(write, r2t.i32(20), 0, block(3));
            int ping = c.ping();
            p = c.next();
            assertEquals(ping, p.itt(), "no answer for the tasks the reset aborted");
            assertEquals(IscsiTaskSet.WINDOW, window(p));
        }
    }

    /** A numbered SIMPLE WRITE(10) task with tag and CmdSN {@code n} and one block of data to come. */
    static IscsiTask task(int n) {
        Pdu p = new Pdu(new byte[48], new byte[0], new byte[0]);
        p.set8(0, Pdu.SCSI_COMMAND).set8(1, 0x80 | 0x20 | IscsiTask.SIMPLE);
        p.set32(16, n).set32(20, 512).set32(24, n);
        System.arraycopy(cdb10(0x2A, n, 1), 0, p.bhs, 32, 16);
        return new IscsiTask(p, 512, 512, 512);
    }

    @Test
    void onlyTasksAnotherNexusAbortedAreAnsweredTaskAborted() {
        java.util.List<IscsiTask> started = new java.util.ArrayList<>();
        IscsiTaskSet set = new IscsiTaskSet(1, started::add, 1 << 20);
        IscsiTask own = task(1);
        IscsiTask other = task(2);
        IscsiTask both = task(3);
        IscsiTask waitingOwn = task(4);
        IscsiTask waitingOther = task(5);
        for (IscsiTask t : new IscsiTask[] {own, other, both, waitingOwn, waitingOther}) {
            assertTrue(set.sequenced(t.cmdSn, false, true));
            set.add(t);
        }
        for (IscsiTask t : new IscsiTask[] {own, other, both}) {
            set.ready(t);
        }
        assertEquals(java.util.List.of(own, other, both), started, "three running, two waiting for data");
        set.abort(t -> t == own || t == waitingOwn);
        set.abort(t -> t == other || t == waitingOther, true);
        set.abort(t -> t == both);
        set.abort(t -> t == both, true);
        assertTrue(waitingOwn.done.isDone(), "the session's own abort: a waiting task is gone at once");
        assertTrue(!waitingOther.done.isDone(), "another nexus's abort: done once the connection has answered it");
        assertTrue(!other.done.isDone(), "a running task leaves when its engine requests end");
        assertTrue(!set.completed(own), "aborted by its own session: not answered");
        assertTrue(set.completed(other), "aborted by another nexus: answered (TASK ABORTED)");
        assertTrue(!set.completed(both), "the first abort decides");
    }
}
