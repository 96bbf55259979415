package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.BlockIoException;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One volume as SCSI logical unit 0 of its target: executes a CDB with its Data-Out and says how it
 * ended (SBC-3, SPC-4). Data goes through the engine's {@link BlockDevice}: with a protect field of
 * 0 as data-only requests (PI generated on the way in, checked and stripped on the way out); with a
 * protect field of 1 to 5 the initiator's 8-byte tuples travel interleaved after each block and are
 * passed to the engine, which checks them as the field's table says and stores nothing when a check
 * fails. Writes hold their blocks shared in a {@link ScsiRangeLock} that COMPARE AND WRITE holds
 * alone; the unit's persistent reservations ({@link ScsiReservations}) refuse commands of other
 * I_T nexuses before they run. Safe from any thread: the sessions' commands run at once.
 *
 * <p>{@link #start} runs the common READ and WRITE without a thread of their own: one engine
 * request started on the calling thread, answered from its completion.
 */
final class ScsiLun {
    /**
     * The smallest write with PI from the wire whose blocks go into a pooled direct buffer: below it
     * a write gains nothing from it (docs/ISCSI.md, Speed).
     */
    private static final int POOLED_WRITE_MIN = 32_768;
    /** How long a reservation change shared with other ports waits to be decided (a replicated volume's operation timeout). */
    private static final long SHARED_WAIT_MILLIS = 15_000;

    private final BlockDevice device;
    private final ScsiPages pages;
    private final int maxTransferBlocks;
    private final ScsiProvisioning provisioning;
    private final ScsiReservations reservations;
    private final ScsiUnitAttentions attentions;
    private final ScsiRangeLock writes;
    private final ScsiCompareAndWrite compareAndWrite;
    private final ScsiOrWrite orWrite;
    private final ScsiExtendedCopy extendedCopy;
    private final ScsiPortGroups portGroups;
    /** The unit that replaced this one for a changed volume (sessions move on to it), or null. */
    private volatile ScsiLun next;
    /** Where READs of protect 0 that one engine request serves are read into. */
    private final DataInPool dataIn;
    /** Aborts the tasks of the I_T nexuses a PREEMPT AND ABORT preempted, returning once they have left. */
    private final ScsiTaskAborts preemptAndAbort;

    /**
     * The unit of {@code device}; {@code previous} (or null) is the unit this one replaces for a
     * changed volume: its reservations, range lock and port groups carry over, so sessions still on
     * it stay under the same reservations and COMPARE AND WRITE stays atomic against their writes. A
     * changed capacity is a unit attention (CAPACITY DATA HAS CHANGED) for every nexus on the unit.
     * {@code dataIn}: the server's read buffers. With {@code reservationsDir} (else null) the unit
     * keeps its persistent reservations there through a restart when an initiator sets APTPL
     * ({@link ScsiReservationFile}), and says what it loaded to {@code log}; {@code preemptAndAbort}
     * aborts the tasks of the I_T nexuses a PREEMPT AND ABORT preempted and returns once they have
     * left. {@code paths}: the volume's peers and their states, {@code mover} makes one lead ({@link ScsiPortGroups});
     * {@code units}: the server's other units, for copies between units.
     */
    ScsiLun(BlockDevice device, int maxTransferBytes, ScsiLun previous, DataInPool dataIn,
            java.nio.file.Path reservationsDir, Consumer<String> log,
            ScsiTaskAborts preemptAndAbort,
            Supplier<io.pistore.spi.PathGroup> paths, ScsiPortGroups.Mover mover, ScsiExtendedCopy.Units units) {
        this.portGroups = previous == null ? new ScsiPortGroups(paths, mover,
                m -> log.accept("iscsi: volume " + device.info().name() + ": " + m)) : previous.portGroups;
        this.dataIn = dataIn;
        this.preemptAndAbort = preemptAndAbort;
        this.attentions = previous == null ? new ScsiUnitAttentions() : previous.attentions;
        io.pistore.spi.SharedVolumeState shared = device.connection().sharedState(device.info().name());
        this.reservations = previous != null ? previous.reservations : shared != null
                ? new ScsiReservations(attentions, portGroups::ownPort, new ScsiSharedReservations(shared, attentions,
                        (n, at) -> preemptAndAbort.abort(current(), n, at, false), log, SHARED_WAIT_MILLIS))
                : reservationsDir == null ? new ScsiReservations(attentions, portGroups::ownPort)
                : new ScsiReservations(attentions, portGroups::ownPort, new ScsiReservationFile(reservationsDir,
                device.info().name()), log);
        // a unit whose reservations other ports share sends its writes checked against them
        this.device = reservations.isShared() ? BlockDevice.open(new ScsiFencedConnection(device.connection(),
                reservations), device.info().name()) : device;
        this.writes = previous == null ? new ScsiRangeLock() : previous.writes;
        BlockFormat f = device.format();
        int wire = f.dataSize() + (ScsiPages.exposesPi(f) ? 8 : 0);
        int n = Integer.highestOneBit(Math.max(1, maxTransferBytes / Math.max(wire, f.blockSize())));
        this.maxTransferBlocks = n;
        this.pages = new ScsiPages(device.info(), n, portGroups);
        this.provisioning = new ScsiProvisioning(device, n, dataIn);
        this.compareAndWrite = new ScsiCompareAndWrite(this.device, writes, n); // checked against shared reservations
        this.orWrite = new ScsiOrWrite(this.device, writes, n);
        this.extendedCopy = new ScsiExtendedCopy(device, writes, n, pages.naaDesignator(), units);
        if (previous != null) {
            previous.next = this;
            if (previous.device.info().blockCount() != device.info().blockCount()) {
                attentions.establishAll(ScsiUnitAttentions.CAPACITY_DATA_HAS_CHANGED);
            }
        }
    }

    /** This unit, or the newest that replaced it. */
    ScsiLun current() {
        ScsiLun l = this;
        for (ScsiLun n = l.next; n != null; n = l.next) {
            l = n;
        }
        return l;
    }


    /**
     * The most blocks a READ or a WRITE without PI from the initiator may move (several engine
     * requests): four times the block limits' maximum transfer length, which bounds the memory of
     * one command.
     */
    int maxCommandBlocks() {
        return ScsiProvisioning.maxWriteSameBlocks(maxTransferBlocks);
    }

    ScsiPages pages() {
        return pages;
    }

    String volume() {
        return device.info().name();
    }

    long blockCount() {
        return device.info().blockCount();
    }

    /** Bytes of Data-Out the command needs, or 0 when it takes none (only READ/WRITE/VERIFY take any). */
    long dataOutBytes(byte[] cdb) {
        switch (cdb[0] & 0xff) {
            case 0x89: return compareAndWrite.dataOutBytes(cdb);
            case ScsiOrWrite.OPCODE: return orWrite.dataOutBytes(cdb);
            case ScsiExtendedCopy.EXTENDED_COPY: return ScsiExtendedCopy.dataOutBytes(cdb);
            case 0x15:
            case 0x55:
                return ScsiModeSelect.dataOutBytes(cdb);
            case 0x5F: return Cdb.u32(cdb, 5);
            default: break;
        }
        long p = provisioning.dataOutBytes(cdb);
        if (p >= 0) {
            return p;
        }
        Cdb c = Cdb.parse(cdb);
        if (c == null || c.kind() == Cdb.Kind.READ || c.kind() == Cdb.Kind.VERIFY && c.bytchk() == 0) {
            return 0;
        }
        return c.blocks() * wireBlock(c.protect());
    }

    private int wireBlock(int protect) {
        return device.format().dataSize() + (protect != 0 && pages.pi() ? 8 : 0);
    }

    /**
     * Executes {@code cdb} for the I_T nexus of initiator port {@code nexus}; {@code dataOut} holds
     * what the initiator sent (possibly empty). A pending unit attention of the nexus comes first,
     * then the reservations; {@link ScsiCommands} runs what is left.
     */
    ScsiResult execute(String nexus, byte[] cdb, byte[] dataOut) {
        int ua = attentions.take(nexus, cdb[0] & 0xff);
        if (ua >= 0) {
            return ScsiResult.check(ScsiResult.UNIT_ATTENTION, ua >>> 8, ua & 0xff);
        }
        if (reservations.conflicts(nexus, cdb) && reservations.stillConflicts(nexus, cdb)) {
            return ScsiResult.status(ScsiResult.RESERVATION_CONFLICT);
        }
        ScsiCommands.Command c = ScsiCommands.find(cdb);
        return c == null ? ScsiCommands.unsupported(cdb)
                : ScsiFencedConnection.as(nexus, () -> c.handler().run(this, nexus, cdb, dataOut));
    }

    ScsiReservations reservations() {
        return reservations;
    }

    /**
     * PERSISTENT RESERVE OUT; a PREEMPT AND ABORT that removed registrations aborts the tasks of
     * those I_T nexuses (SPC-4 5.12.11.2.5) before it is answered.
     */
    ScsiResult persistentReserveOut(String nexus, byte[] cdb, byte[] param) {
        java.util.Set<String> preempted = new java.util.HashSet<>();
        ScsiResult r = reservations.out(nexus, cdb, param, preempted);
        if (r.status == ScsiResult.GOOD && (cdb[1] & 0x1f) == 5 && !preempted.isEmpty()) {
            preemptAndAbort.abort(this, preempted, System.nanoTime(), true);
        }
        return r;
    }

    ScsiUnitAttentions attentions() {
        return attentions;
    }

    ScsiPortGroups portGroups() {
        return portGroups;
    }

    /** Looks at the port groups' states; a change is ASYMMETRIC ACCESS STATE CHANGED ({@link ScsiPortGroups#refresh}). */
    void checkPortGroups() {
        portGroups.refresh(attentions);
    }

    /** Whether the unit shows Type 2 PI (its 32-byte CDBs run; SBC-3). */
    boolean type2() {
        return pages.pi() && pages.type() == PiType.TYPE_2;
    }

    ScsiResult modeSelect(byte[] cdb, byte[] dataOut) {
        return ScsiModeSelect.run(pages, cdb, dataOut);
    }

    ScsiResult compareAndWrite(byte[] cdb, byte[] dataOut) {
        return compareAndWrite.run(cdb, dataOut, pages.readOnly());
    }

    ScsiResult orWrite(byte[] cdb, byte[] dataOut) {
        return orWrite.run(cdb, dataOut, pages.readOnly());
    }

    ScsiExtendedCopy extendedCopy() {
        return extendedCopy;
    }

    /** The I_T nexus of initiator port {@code nexus} ended: its unit attentions, reservation state and copy statuses go. */
    void nexusLost(String nexus) {
        attentions.detach(nexus);
        reservations.nexusLost(nexus);
        extendedCopy.nexusLost(nexus);
    }

    /** UNMAP, WRITE SAME(10) and WRITE SAME(16), holding the whole unit shared. */
    ScsiResult provision(byte[] cdb, byte[] dataOut) {
        return holdingAll(() -> (cdb[0] & 0xff) == 0x42 ? provisioning.unmap(cdb, dataOut, pages.readOnly())
                : provisioning.writeSame(cdb, dataOut, pages.readOnly()));
    }

    ScsiResult readCapacity10() {
        return ScsiResult.good(pages.readCapacity10());
    }

    ScsiResult readCapacity16(byte[] cdb) {
        return ScsiResult.cut(pages.readCapacity16(), Cdb.u32(cdb, 10));
    }

    ScsiResult lbaStatus(byte[] cdb) {
        return provisioning.lbaStatus(cdb);
    }

    ScsiResult reportLuns(byte[] cdb) {
        return ScsiResult.cut(pages.reportLuns(), Cdb.u32(cdb, 6));
    }

    /**
     * Starts a READ or WRITE (10, 12, 16) that one engine request serves, without waiting: the
     * request is submitted on the calling thread (the in-process transport runs it there) and
     * {@code done} gets the result on whichever thread completes it, or null when the engine's queue
     * was full (then run the command with {@link #execute}). Returns false, having started nothing,
     * for any other command, for one {@link #execute} answers with an error or a unit attention (any
     * pending on the unit), and for a write whose
     * blocks a COMPARE AND WRITE holds or waits for: those run with {@link #execute}. A write's data
     * is {@code placed} (position 0, limit its length; see {@link DataInPool#placesWrite}) or else {@code dataOut}.
     */
    boolean start(String nexus, byte[] cdb, byte[] dataOut, ByteBuffer placed, long receivedNanos,
            Consumer<ScsiResult> done) {
        return reservations.isShared() ? ScsiFencedConnection.as(nexus, () -> startHere(nexus, cdb, dataOut, placed,
                receivedNanos, done)) : startHere(nexus, cdb, dataOut, placed, receivedNanos, done);
    }

    private boolean startHere(String nexus, byte[] cdb, byte[] dataOut, ByteBuffer placed, long receivedNanos,
            Consumer<ScsiResult> done) {
        int op = cdb[0] & 0xff;
        boolean read = op == 0x28 || op == 0xA8 || op == 0x88;
        if (!read && op != 0x2A && op != 0xAA && op != 0x8A) {
            return false;
        }
        Cdb c = Cdb.parse(cdb);
        if (c.blocks() == 0 || c.blocks() > maxTransferBlocks
                || Cdb.outOfRange(c.lba(), c.blocks(), device.info().blockCount()) || checkProtect(c) != null
                || attentions.anyPending() || reservations.conflicts(nexus, cdb)) {
            return false;
        }
        int n = (int) c.blocks();
        if (read) {
            startRead(c, n, receivedNanos, done);
            return true;
        }
        ByteBuffer in = placed != null ? placed : ByteBuffer.wrap(dataOut);
        int total = (int) Math.min(n, in.limit() / wireBlock(c.protect()));
        if (pages.readOnly() || total == 0) {
            return false;
        }
        ScsiRangeLock.Range held = writes.tryLock(c.lba(), c.blocks());
        if (held == null) {
            return false;
        }
        int ds = device.format().dataSize();
        // PI from the wire split into a pooled direct buffer: given back once, whichever way the request ends
        AtomicReference<ByteBuffer> pooled = new AtomicReference<>(c.protect() != 0 && total * ds >= POOLED_WRITE_MIN
                && total * ds <= DataInPool.LARGEST ? dataIn.take(total * ds) : null);
        try {
            BlockRequest w = pooled.get() == null ? writeRequest(c, c.lba(), in, 0, total)
                    : piWriteRequest(c, c.lba(), in, 0, total, pooled.get());
            device.submitMayCompleteOnCaller(w, r -> {
                writes.unlock(held);
                dataIn.give(pooled.getAndSet(null));
                done.accept(r.status() == Status.QUEUE_FULL ? null
                        : r.isSuccess() ? ScsiResult.good() : ScsiResult.of(r, true));
            });
        } catch (RuntimeException e) {
            writes.unlock(held); // unlocking twice is harmless: the range is gone after the first
            dataIn.give(pooled.getAndSet(null));
            throw e;
        }
        return true;
    }

    private void startRead(Cdb c, int n, long receivedNanos, Consumer<ScsiResult> done) {
        int ds = device.format().dataSize();
        String name = device.info().name();
        if (c.protect() == 0 && n * ds <= DataInPool.LARGEST) {
            ByteBuffer out = dataIn.take(n * ds);
            BlockRequest r = BlockRequest.read(name, c.lba(), n, ScatterList.of(out), null, device.insertStrip(c.lba()),
                    receivedNanos);
            try {
                device.submitMayCompleteOnCaller(r, x -> {
                    if (!x.isSuccess()) {
                        dataIn.give(out);
                    }
                    done.accept(x.status() == Status.QUEUE_FULL ? null
                            : x.isSuccess() ? ScsiResult.good(out) : ScsiResult.of(x, false));
                });
            } catch (RuntimeException e) {
                dataIn.give(out);
                throw e;
            }
            return;
        }
        if (c.protect() == 0) {
            byte[] out = new byte[n * ds];
            BlockRequest r = BlockRequest.read(name, c.lba(), n, ScatterList.wrap(out), null, device.insertStrip(c.lba()),
                    receivedNanos);
            device.submitMayCompleteOnCaller(r, x -> done.accept(x.status() == Status.QUEUE_FULL ? null
                    : x.isSuccess() ? ScsiResult.good(out) : ScsiResult.of(x, false)));
            return;
        }
        if (n * (ds + 8) <= DataInPool.LARGEST) {
            startPooledPiRead(c, n, ds, receivedNanos, done);
            return;
        }
        byte[] data = new byte[n * ds];
        byte[] meta = new byte[n * 8];
        BlockRequest r = BlockRequest.read(name, c.lba(), n, ScatterList.wrap(data), ScatterList.wrap(meta),
                protection(c, c.lba()), receivedNanos);
        device.submitMayCompleteOnCaller(r, x -> {
            if (x.status() == Status.QUEUE_FULL) {
                done.accept(null);
                return;
            }
            if (!x.isSuccess()) {
                done.accept(ScsiResult.of(x, false));
                return;
            }
            byte[] out = new byte[n * (ds + 8)];
            interleave(ByteBuffer.wrap(data), meta, ByteBuffer.wrap(out), 0, n, ds);
            done.accept(ScsiResult.good(out));
        });
    }

    /**
     * A read with PI on the wire that fits a pooled buffer: the blocks go from the file into one pooled
     * direct buffer (no zeroed heap array, no copy through the JDK's temporary buffer), the tuples into
     * a small array, and both interleave into a second pooled buffer that the socket takes as it is.
     */
    private void startPooledPiRead(Cdb c, int n, int ds, long receivedNanos, Consumer<ScsiResult> done) {
        ByteBuffer data = dataIn.take(n * ds);
        byte[] meta = new byte[n * 8];
        BlockRequest r = BlockRequest.read(device.info().name(), c.lba(), n, ScatterList.of(data),
                ScatterList.wrap(meta), protection(c, c.lba()), receivedNanos);
        try {
            device.submitMayCompleteOnCaller(r, x -> {
                ByteBuffer out = null;
                try {
                    if (x.isSuccess()) {
                        out = dataIn.take(n * (ds + 8));
                        interleave(data, meta, out, 0, n, ds);
                    }
                } finally {
                    dataIn.give(data);
                }
                done.accept(x.status() == Status.QUEUE_FULL ? null
                        : out != null ? ScsiResult.good(out) : ScsiResult.of(x, false));
            });
        } catch (RuntimeException e) {
            dataIn.give(data);
            throw e;
        }
    }

    /**
     * Puts {@code n} blocks of data and their tuples into {@code out} from block {@code at}, each block
     * followed by its tuple (absolute puts: the buffer's position stays).
     */
    private static void interleave(ByteBuffer data, byte[] meta, ByteBuffer out, int at, int n, int ds) {
        int wire = ds + 8;
        // A tuple as one long, both views big-endian (the bytes as they are): a bulk put of 8 bytes
        // costs more to set up than it copies.
        ByteBuffer tuples = ByteBuffer.wrap(meta);
        ByteBuffer o = out.order() == java.nio.ByteOrder.BIG_ENDIAN ? out : out.duplicate().order(java.nio.ByteOrder.BIG_ENDIAN);
        for (int i = 0; i < n; i++) {
            o.put((at + i) * wire, data, i * ds, ds);
            o.putLong((at + i) * wire + ds, tuples.getLong(i * 8));
        }
    }

    /**
     * The engine request that writes {@code total} blocks at {@code lba} from {@code dataOut} (from
     * block {@code from} of it): data only with protect 0 (PI generated), else data and the
     * initiator's tuples with the checks the protect field asks for.
     */
    private BlockRequest writeRequest(Cdb c, long lba, byte[] dataOut, int from, int total) {
        return writeRequest(c, lba, ByteBuffer.wrap(dataOut), from, total);
    }

    private BlockRequest writeRequest(Cdb c, long lba, ByteBuffer dataOut, int from, int total) {
        int ds = device.format().dataSize();
        if (c.protect() == 0) {
            ScatterList data = ScatterList.of(dataOut.slice(from * ds, total * ds));
            return BlockRequest.write(device.info().name(), lba, total, data, null, device.insertStrip(lba), c.fua());
        }
        return piWriteRequest(c, lba, dataOut, from, total, ByteBuffer.wrap(new byte[total * ds]));
    }

    /**
     * The engine request that writes {@code total} blocks with PI from the wire at {@code lba} from
     * block {@code from} of {@code dataOut}: the blocks split from their tuples into {@code data} (a
     * heap array's buffer, or a pooled direct one, which the volume's file takes without a copy
     * through the JDK's temporary buffer), the tuples into a small array, with the checks the
     * protect field asks for.
     */
    private BlockRequest piWriteRequest(Cdb c, long lba, ByteBuffer dataOut, int from, int total, ByteBuffer data) {
        int ds = device.format().dataSize();
        int wire = ds + 8;
        byte[] meta = new byte[total * 8];
        for (int i = 0; i < total; i++) {
            data.put(i * ds, dataOut, (from + i) * wire, ds);
            dataOut.get((from + i) * wire + ds, meta, i * 8, 8);
        }
        return BlockRequest.write(device.info().name(), lba, total, ScatterList.of(data), ScatterList.wrap(meta),
                protection(c, lba), c.fua());
    }

    /** READ, WRITE and VERIFY of every CDB size ({@link Cdb}). */
    ScsiResult readWriteVerify(byte[] cdb, byte[] dataOut) {
        Cdb c = Cdb.parse(cdb);
        if (c == null) {
            return ScsiCommands.unsupported(cdb);
        }
        ScsiResult bad = checkProtect(c);
        if (bad != null) {
            return bad;
        }
        if (Cdb.outOfRange(c.lba(), c.blocks(), device.info().blockCount())) {
            return ScsiResult.lbaOutOfRange();
        }
        if (c.blocks() == 0) {
            return ScsiResult.good();
        }
        switch (c.kind()) {
            case READ: return read(c);
            case WRITE: case WRITE_ATOMIC: return holding(c.lba(), c.blocks(), () -> write(c, dataOut));
            // alone, as COMPARE AND WRITE: no other write lands between the write and its verify
            case WRITE_VERIFY: return writes.holding(c.lba(), c.blocks(), true, () -> writeAndVerify(c, dataOut));
            default: return verify(c, dataOut);
        }
    }

    /**
     * WRITE AND VERIFY: the write, forced, then a VERIFY of the blocks it stored: their PI checked as
     * the WRPROTECT field asks of a write, and with BYTCHK 1 their data compared with the Data-Out's.
     */
    private ScsiResult writeAndVerify(Cdb c, byte[] dataOut) {
        if (c.bytchk() > 1) {
            return ScsiResult.invalidField();
        }
        ScsiResult w = write(c.forced(), dataOut);
        int wire = wireBlock(c.protect());
        int total = (int) Math.min(c.blocks(), dataOut.length / wire);
        if (w.status != ScsiResult.GOOD || total == 0) {
            return w;
        }
        // with protect 0 the comparing VERIFY's read checks the PI as a VERIFY with protect 0 would
        ScsiResult checked = c.bytchk() == 1 && c.protect() == 0 ? null : verify(c.verifying(total, c.protect(), 0), dataOut);
        if (checked != null && (checked.status != ScsiResult.GOOD || c.bytchk() == 0)) {
            return checked;
        }
        int ds = device.format().dataSize();
        byte[] data = dataOut;
        if (wire != ds) { // the tuples that followed each block on the wire left out of the comparison
            data = new byte[total * ds];
            for (int i = 0; i < total; i++) {
                System.arraycopy(dataOut, i * wire, data, i * ds, ds);
            }
        }
        return verify(c.verifying(total, 0, 1), data);
    }

    /** Runs a write with its blocks held shared (COMPARE AND WRITE waits for it, and it for one). */
    private ScsiResult holding(long lba, long blocks, Supplier<ScsiResult> write) {
        return writes.holding(lba, blocks, false, write);
    }

    /** UNMAP and WRITE SAME hold the whole unit shared (their ranges are checked inside). */
    private ScsiResult holdingAll(Supplier<ScsiResult> write) {
        return holding(0, device.info().blockCount(), write);
    }

    /** A reserved protect value, PI asked of a unit without it, a CDB size its protection type forbids. */
    private ScsiResult checkProtect(Cdb c) {
        if (c.protect() > 5) {
            return ScsiResult.invalidField();
        }
        boolean type2 = pages.pi() && pages.type() == PiType.TYPE_2;
        if (c.is32() != type2) {
            // 32-byte CDBs serve Type 2 only; Type 2 takes its reference tags from them
            return c.is32() || c.protect() != 0 ? ScsiResult.invalidOpcode() : null;
        }
        if (c.protect() != 0 && !pages.pi()) {
            return ScsiResult.invalidField();
        }
        // PI from the initiator, or a write that must be atomic: one engine request
        boolean oneRequest = c.writes() && c.protect() != 0 || c.kind() == Cdb.Kind.WRITE_ATOMIC;
        if (c.kind() != Cdb.Kind.VERIFY && c.blocks() > (oneRequest ? maxTransferBlocks : maxCommandBlocks())) {
            return ScsiResult.invalidField();
        }
        return null;
    }

    /** The checks a protect value asks for (SBC-3 tables for RDPROTECT, WRPROTECT and VRPROTECT). */
    private Protection protection(Cdb c, long lba) {
        long refTag = c.is32() ? (c.expectedRefTag() + (lba - c.lba())) & 0xFFFFFFFFL : device.format().refTagOf(lba);
        int mask = c.is32() ? c.appTagMask() : 0;
        int tag = c.is32() ? c.expectedAppTag() : 0;
        return Protection.pass(Cdb.checks(c.protect(), pages.type(), mask != 0), refTag, tag, mask);
    }

    /** Reads in requests of at most the block limits' transfer length; the failing request's sense is the answer. */
    private ScsiResult read(Cdb c) {
        int ds = device.format().dataSize();
        int wire = wireBlock(c.protect());
        byte[] out = new byte[(int) c.blocks() * wire];
        for (int done = 0; done < c.blocks(); ) {
            int n = (int) Math.min(maxTransferBlocks, c.blocks() - done);
            long lba = c.lba() + done;
            Completion r;
            if (c.protect() == 0) {
                // without PI on the wire the blocks are read straight into the answer
                ScatterList data = ScatterList.of(ByteBuffer.wrap(out, done * ds, n * ds).slice());
                r = await(() -> device.read(lba, data));
            } else {
                byte[] data = new byte[n * ds];
                byte[] meta = new byte[n * 8];
                r = await(() -> device.read(lba, ScatterList.wrap(data), ScatterList.wrap(meta), protection(c, lba)));
                if (r.isSuccess()) {
                    interleave(ByteBuffer.wrap(data), meta, ByteBuffer.wrap(out), done, n, ds);
                }
            }
            if (!r.isSuccess()) {
                return ScsiResult.of(r, false);
            }
            done += n;
        }
        return ScsiResult.good(out);
    }

    /**
     * Writes the blocks. With PI from the initiator the write is one engine request (at most the
     * block limits' transfer length, checked before), so a failed check stores nothing of it; a write
     * whose PI the target generates cannot fail a check and goes in requests of that length.
     */
    private ScsiResult write(Cdb c, byte[] dataOut) {
        if (pages.readOnly()) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        int wire = wireBlock(c.protect());
        // an expected transfer length shorter than the CDB's writes the whole blocks it covers (residual overflow)
        int total = (int) Math.min(c.blocks(), dataOut.length / wire);
        if (c.protect() == 0) {
            for (int done = 0; done < total; ) {
                int n = Math.min(maxTransferBlocks, total - done);
                BlockRequest w = writeRequest(c, c.lba() + done, dataOut, done, n);
                Completion r = await(() -> device.submit(w));
                if (!r.isSuccess()) {
                    return ScsiResult.of(r, true);
                }
                done += n;
            }
            return ScsiResult.good();
        }
        if (total == 0) {
            return ScsiResult.good();
        }
        BlockRequest w = writeRequest(c, c.lba(), dataOut, 0, total);
        Completion done = await(() -> device.submit(w));
        return done.isSuccess() ? ScsiResult.good() : ScsiResult.of(done, true);
    }

    /**
     * VERIFY: BYTCHK 0 reads and checks the blocks (PI as VRPROTECT says); BYTCHK 1 compares them with
     * the Data-Out, with VRPROTECT 1-5 their tuples too ({@link ScsiPiCompare}).
     */
    private ScsiResult verify(Cdb c, byte[] dataOut) {
        if (c.bytchk() > 1) {
            return ScsiResult.invalidField();
        }
        if (c.bytchk() == 1 && c.protect() != 0) {
            return ScsiPiCompare.verify(device, c, dataOut, maxTransferBlocks, lba -> protection(c, lba));
        }
        int ds = device.format().dataSize();
        if (c.bytchk() == 1 && dataOut.length < c.blocks() * ds) {
            return ScsiResult.invalidField();
        }
        long done = 0;
        while (done < c.blocks()) {
            int n = (int) Math.min(maxTransferBlocks, c.blocks() - done);
            long lba = c.lba() + done;
            ByteBuffer data = ByteBuffer.allocate(n * ds);
            Completion r = c.protect() == 0
                    ? await(() -> device.read(lba, ScatterList.of(data)))
                    : await(() -> device.read(lba, ScatterList.of(data), ScatterList.of(ByteBuffer.allocate(n * 8)),
                            protection(c, lba)));
            if (!r.isSuccess()) {
                return ScsiResult.of(r, false);
            }
            if (c.bytchk() == 1) {
                byte[] d = data.array();
                for (int i = 0; i < d.length; i++) {
                    if (d[i] != dataOut[(int) (done * ds) + i]) {
                        return ScsiResult.check(ScsiResult.MISCOMPARE, 0x1D, 0x00, done * ds + i);
                    }
                }
            }
            done += n;
        }
        return ScsiResult.good();
    }

    ScsiResult synchronize(long lba, long blocks) {
        long count = device.info().blockCount();
        if (lba > count || blocks > 0 && lba + blocks > count) {
            return ScsiResult.lbaOutOfRange();
        }
        Completion done = await(device::flush);
        return done.isSuccess() ? ScsiResult.good() : ScsiResult.of(done, true);
    }

    ScsiResult requestSense(String nexus, byte[] cdb) {
        return attentions.requestSense(nexus, cdb);
    }

    ScsiResult inquiry(byte[] cdb) {
        boolean evpd = (cdb[1] & 0x01) != 0;
        int page = cdb[2] & 0xff;
        int alloc = Cdb.u16(cdb, 3);
        if (!evpd) {
            return page != 0 ? ScsiResult.invalidField() : ScsiResult.cut(pages.standardInquiry(), alloc);
        }
        byte[] p = pages.vpd(page);
        return p == null ? ScsiResult.invalidField() : ScsiResult.cut(p, alloc);
    }

    ScsiResult modeSense(byte[] cdb, boolean ten) {
        return pages.modeSense(cdb, ten);
    }

    /** Waits for an engine request, resubmitting while its queue is full; a failure as its completion. */
    static Completion await(Supplier<CompletableFuture<Completion>> submit) {
        try {
            return BlockDevice.await(submit);
        } catch (BlockIoException e) {
            return e.completion();
        }
    }
}
