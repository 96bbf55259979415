package io.pistore.frontend.iscsi;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One SCSI command of a session from its arrival to its answer: the CDB, its task attribute, the
 * write data as it comes in (immediate, unsolicited and R2T-solicited), and where it stands in the
 * session's task set. {@link #done} completes once the task is answered or aborted; an aborted task
 * is never answered, unless another I_T nexus aborted it ({@link #taskAborted}): then its answer is
 * TASK ABORTED status (TAS 1). The fields of the data transfer are the connection's reader thread's
 * alone; {@link #state}, {@link #aborted} and {@link #taskAborted} change only under the task set's
 * lock.
 */
final class IscsiTask {
    /** SAM task attributes, as the SCSI Command PDU carries them (untagged runs as SIMPLE). */
    static final int SIMPLE = 1;
    static final int ORDERED = 2;
    static final int HEAD_OF_QUEUE = 3;
    static final int ACA = 4;

    enum State { DATA, QUEUED, RUNNING }

    final int itt;
    final long lun;
    final long cmdSn;
    final boolean immediate;
    final int attribute;
    final byte[] cdb;
    /** The iSCSI expected data transfer length. */
    final long edtl;
    /** Data-Out bytes the CDB needs, -1 for a command that takes none. */
    final long writeNeeded;
    /** The write data, unless it is in {@link #buffer} (then empty). */
    final byte[] data;
    /**
     * A WRITE's data in a pooled direct buffer (position 0, limit its length), read into it straight
     * from the socket ({@link PduChannel.Placement}); else null. Given back once every holder let go.
     */
    final ByteBuffer buffer;
    /** Holders of {@link #buffer}: the task until {@link #done}, and {@link PendingWrites} while it waits for data. */
    private final AtomicInteger bufferHolds;
    /** When its command PDU had arrived whole ({@link Pdu#receivedNanos}). */
    final long receivedNanos;
    final CompletableFuture<Void> done = new CompletableFuture<>();

    State state = State.DATA;
    /** Set under the task set's lock; read without it by the reader thread, which then drops the task's Data-Out. */
    volatile boolean aborted;
    /** Aborted by another I_T nexus (a reset, CLEAR TASK SET, PREEMPT AND ABORT): answered TASK ABORTED. */
    volatile boolean taskAborted;

    int received;
    /** End of the current burst (unsolicited or R2T), and the transfer tag it answers. */
    int burstEnd;
    int ttt = Pdu.RESERVED_TAG;
    int r2tSn;
    /** The DataSN the next Data-Out of the current burst carries (0 at the start of each). */
    int dataSn;

    IscsiTask(Pdu p, long edtl, long writeNeeded, int dataLength) {
        this(p, edtl, writeNeeded, new byte[dataLength], null, 0);
    }

    /** A task whose write data is {@code data}, held from now on (the PDU's own buffer, all of it immediate). */
    IscsiTask(Pdu p, long edtl, long writeNeeded, byte[] data) {
        this(p, edtl, writeNeeded, data, null, 0);
    }

    /**
     * A task whose write data goes in the pooled {@code buffer}, which {@code holders} hold: 1 when
     * all of the data came with the command ({@link Pdu#placed}), 2 when it then waits for Data-Out.
     */
    IscsiTask(Pdu p, long edtl, long writeNeeded, ByteBuffer buffer, int holders) {
        this(p, edtl, writeNeeded, new byte[0], buffer, holders);
    }

    private IscsiTask(Pdu p, long edtl, long writeNeeded, byte[] data, ByteBuffer buffer, int holders) {
        this.itt = p.itt();
        this.lun = p.lun();
        this.cmdSn = p.u32(24);
        this.immediate = p.immediate();
        int a = p.flags() & 0x07;
        this.attribute = a == 0 || a > ACA ? SIMPLE : a;
        this.cdb = p.cdb();
        this.edtl = edtl;
        this.writeNeeded = writeNeeded;
        this.data = data;
        this.buffer = buffer;
        this.bufferHolds = new AtomicInteger(holders);
        this.receivedNanos = p.receivedNanos;
    }

    /** Whether Data-Out {@code p}, of {@code len} bytes, is the next one this task's burst expects. */
    boolean expects(Pdu p, int len) {
        return p.i32(20) == ttt && p.i32(40) == received && len <= burstEnd - received && p.i32(36) == dataSn;
    }

    /**
     * Takes the next {@code len} bytes of write data, at {@link #received}: copied from {@code src},
     * or already in place ({@code src} null: read into {@link #buffer}, or {@link #data} is the PDU's).
     */
    void append(byte[] src, int len) {
        if (src != null && buffer != null) {
            buffer.put(received, src, 0, len);
        } else if (src != null) {
            System.arraycopy(src, 0, data, received, len);
        }
        received += len;
    }

    /** One holder lets go of {@link #buffer}; the last gives it back to {@code pool}. */
    void releaseBuffer(DataInPool pool) {
        int left = buffer == null ? 1 : bufferHolds.decrementAndGet();
        if (left == 0) {
            pool.give(buffer);
        } else if (left < 0) {
            pool.releasedUnheld();
        }
    }

    /** Bytes of write data this task takes. */
    int dataLength() {
        return buffer == null ? data.length : buffer.limit();
    }

    /** The write data as an array: {@link #data}, or a copy of {@link #buffer} (for a command run on a worker). */
    byte[] dataBytes() {
        if (buffer == null) {
            return data;
        }
        byte[] b = new byte[buffer.limit()];
        buffer.get(0, b);
        return b;
    }

    /** Bytes this task holds while it runs: its write data or the data it may read. */
    long bytes() {
        return Math.max(dataLength(), edtl);
    }

    /** Whether a task of this attribute waits for every older task (SAM: ORDERED, ACA). */
    boolean waitsForAll() {
        return attribute == ORDERED || attribute == ACA;
    }
}
