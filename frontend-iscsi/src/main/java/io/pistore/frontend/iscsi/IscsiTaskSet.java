package io.pistore.frontend.iscsi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The task set of one session (SAM-5) and its command numbering (RFC 7143 CmdSN window). Commands
 * enter in CmdSN order; one whose data is all in becomes enabled as its attribute allows (SIMPLE
 * once every older ORDERED, ACA and HEAD OF QUEUE task has completed, ORDERED once every older task
 * has, HEAD OF QUEUE at once) and is handed to the starter, outside this set's lock (the starter
 * runs it on a worker, or starts its engine requests on the calling thread), so many commands of one
 * session run at once and are answered as they complete.
 *
 * <p>Bounds: at most {@value #WINDOW} numbered commands in the set, as MaxCmdSN tells the initiator
 * (it grows only when a command leaves, so it never goes back); running tasks hold at most
 * {@link #budget} bytes between them, apart from a single larger one running alone.
 */
final class IscsiTaskSet {
    /** Numbered commands a session may have in the task set at once. */
    static final int WINDOW = 32;

    private final List<IscsiTask> tasks = new ArrayList<>();
    private final Consumer<IscsiTask> starter;
    /** Tasks enabled under the lock, handed to the starter once it is released. */
    private final List<IscsiTask> toStart = new ArrayList<>();
    private final long budget;
    private long expCmdSn;
    /** Non-immediate tasks in the set: each keeps MaxCmdSN one lower. */
    private int numbered;
    private long runningBytes;

    IscsiTaskSet(long expCmdSn, Consumer<IscsiTask> starter, long budget) {
        this.expCmdSn = expCmdSn;
        this.starter = starter;
        this.budget = budget;
    }

    /** Whether no command is in the set: every one was answered, or never will be. */
    synchronized boolean isEmpty() {
        return tasks.isEmpty();
    }

    /** Commands in the set. */
    synchronized int size() {
        return tasks.size();
    }

    /** Writes ExpCmdSN and MaxCmdSN into a response PDU (bytes 28 and 32). */
    synchronized void window(Pdu r) {
        r.set32(28, expCmdSn);
        r.set32(32, maxCmdSn());
    }

    synchronized long expCmdSn() {
        return expCmdSn;
    }

    private long maxCmdSn() {
        return (expCmdSn + WINDOW - 1 - numbered) & 0xFFFFFFFFL;
    }

    /**
     * Whether a PDU with this CmdSN is the next one (or immediate), advancing ExpCmdSN for a
     * non-immediate one. A numbered SCSI command also has to be within the window, and takes its
     * place in it at once (so MaxCmdSN does not move); {@link #add} or {@link #answered} follows.
     */
    synchronized boolean sequenced(long cmdSn, boolean immediate, boolean command) {
        if (immediate) {
            return true;
        }
        if (cmdSn != expCmdSn || command && numbered >= WINDOW) {
            return false;
        }
        expCmdSn = (expCmdSn + 1) & 0xFFFFFFFFL;
        if (command) {
            numbered++;
        }
        return true;
    }

    /** A command {@link #sequenced} admitted was answered without entering the set: its place is free. */
    synchronized void answered(boolean immediate) {
        if (!immediate) {
            numbered--;
        }
    }

    /** Takes a command that {@link #sequenced} admitted; it waits for its data until {@link #ready}. */
    synchronized void add(IscsiTask t) {
        tasks.add(t);
    }

    /** All of the task's data is in: it runs as soon as its attribute and the budget allow. */
    void ready(IscsiTask t) {
        synchronized (this) {
            if (t.aborted) {
                return;
            }
            t.state = IscsiTask.State.QUEUED;
            schedule();
        }
        startEnabled();
    }

    /**
     * Hands the tasks enabled since the last call to the starter, on the calling thread and outside
     * the lock; called after every change that may enable tasks, once the caller is done with its
     * own answer.
     */
    void startEnabled() {
        while (true) {
            IscsiTask t;
            synchronized (this) {
                if (toStart.isEmpty()) {
                    return;
                }
                t = toStart.remove(0);
            }
            starter.accept(t);
        }
    }

    private void schedule() {
        boolean olderAny = false;
        boolean olderBlocking = false;
        for (IscsiTask t : tasks) {
            if (t.state == IscsiTask.State.QUEUED) {
                boolean enabled = t.attribute == IscsiTask.HEAD_OF_QUEUE
                        || (t.waitsForAll() ? !olderAny : !olderBlocking);
                if (enabled && (runningBytes == 0 || runningBytes + t.bytes() <= budget)) {
                    t.state = IscsiTask.State.RUNNING;
                    runningBytes += t.bytes();
                    toStart.add(t);
                }
            }
            olderAny = true;
            olderBlocking |= t.attribute != IscsiTask.SIMPLE;
        }
    }

    /**
     * A running task has completed: it leaves the set (freeing its place in the window) and the
     * tasks it held back are enabled ({@link #startEnabled} starts them). Returns whether it is to
     * be answered (false once aborted, unless by another I_T nexus: then TASK ABORTED).
     */
    synchronized boolean completed(IscsiTask t) {
        runningBytes -= t.bytes();
        leave(t);
        schedule();
        return !t.aborted || t.taskAborted;
    }

    private void leave(IscsiTask t) {
        if (tasks.remove(t) && !t.immediate) {
            numbered--;
        }
    }

    /**
     * Aborts the matching tasks: those not running leave the set now (their {@code done} completes),
     * running ones are marked and leave when their engine requests end; none of them is answered
     * (this session's own abort).
     * Returns the aborted tasks; wait for their {@code done} before confirming the abort.
     */
    List<IscsiTask> abort(Predicate<IscsiTask> which) {
        return abort(which, false);
    }

    /**
     * As {@link #abort(Predicate)}; with {@code byOtherNexus} the tasks are marked to be answered
     * TASK ABORTED ({@link IscsiTask#taskAborted}), and those that left the set now (not running)
     * keep {@code done} incomplete: the caller answers them and then completes it.
     */
    List<IscsiTask> abort(Predicate<IscsiTask> which, boolean byOtherNexus) {
        List<IscsiTask> out = abortLocked(which, byOtherNexus);
        startEnabled();
        return out;
    }

    private synchronized List<IscsiTask> abortLocked(Predicate<IscsiTask> which, boolean byOtherNexus) {
        List<IscsiTask> out = new ArrayList<>();
        for (Iterator<IscsiTask> i = tasks.iterator(); i.hasNext(); ) {
            IscsiTask t = i.next();
            if (!which.test(t)) {
                continue;
            }
            if (!t.aborted) { // the first abort decides whether it is answered
                t.taskAborted = byOtherNexus;
            }
            t.aborted = true;
            out.add(t);
            if (t.state != IscsiTask.State.RUNNING) {
                i.remove();
                if (!t.immediate) {
                    numbered--;
                }
                if (!byOtherNexus) {
                    t.done.complete(null);
                }
            }
        }
        schedule();
        return out;
    }

    /** Whether {@code cmdSn} is inside the window now (ExpCmdSN to MaxCmdSN) and before {@code limit}. */
    synchronized boolean inWindowBefore(long cmdSn, long limit) {
        long max = maxCmdSn();
        return !serialBefore(cmdSn, expCmdSn) && !serialBefore(max, cmdSn) && serialBefore(cmdSn, limit);
    }

    /** Whether serial number {@code a} comes before {@code b} (RFC 1982, 32 bits). */
    static boolean serialBefore(long a, long b) {
        return a != b && ((b - a) & 0xFFFFFFFFL) < 0x80000000L;
    }
}
