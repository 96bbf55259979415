package io.pistore.engine.service;

import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.RequestCheck;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.VolumeInfo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Executes block requests against the volumes of a {@link VolumeStore}.
 *
 * <p>What PI work is left for the target, each request's {@link PiDuty} says. Writes: the request is
 * validated, the PI is generated here when the duty names the target (insert), or the check fields
 * no earlier hop took on are checked, and only then stored, with the duty handed to the volume: a
 * failing write stores nothing. Reads: the stored data and PI are read, the fields no later hop takes
 * on are checked, and returned (pass) or checked and dropped (no metadata buffer: strip).
 *
 * <p>Requests that wait for the disk or for peers run on the {@link TargetThreads} its owner gives
 * it (a server shares one set among its services); built without them, it makes a set of its own,
 * which {@link #close} ends.
 */
public final class TargetService implements TargetHandler, AutoCloseable {
    private final VolumeStore store;
    private final Consumer<String> log;
    private final TargetThreads threads;
    /** Whether {@link #threads} are this service's own, to close with it. */
    private final boolean ownThreads;

    public TargetService(VolumeStore store) {
        this(store, line -> { });
    }

    /** A target service that reports connections, one line each, to {@code log}, with threads of its own. */
    public TargetService(VolumeStore store, Consumer<String> log) {
        this(store, log, new TargetThreads(), true);
    }

    /** A target service whose waits run on {@code threads}, which the caller owns and closes after it. */
    public TargetService(VolumeStore store, Consumer<String> log, TargetThreads threads) {
        this(store, log, threads, false);
    }

    private TargetService(VolumeStore store, Consumer<String> log, TargetThreads threads, boolean ownThreads) {
        this.store = store;
        this.log = log;
        this.threads = threads;
        this.ownThreads = ownThreads;
    }

    /** Ends the threads the service made for itself; given threads stay with their owner. */
    @Override
    public void close() {
        if (ownThreads) {
            threads.close();
        }
    }

    @Override
    public void connected(String peer) {
        log.accept("connection from " + peer);
    }

    @Override
    public void disconnected(String peer, String reason) {
        log.accept("connection from " + peer + " ended: " + reason);
    }

    @Override
    public List<VolumeInfo> volumes() {
        List<VolumeInfo> list = new ArrayList<>();
        for (Volume v : store.list()) {
            list.add(new VolumeInfo(v.name(), v.blockCount(), v.format()));
        }
        return list;
    }

    /** Metadata-only reads are served: each volume reads its metadata alone ({@link Volume#readMetadata}). */
    @Override
    public boolean readsMetadataOnly() {
        return true;
    }

    /** The volume's own path state ({@link Volume#pathState}); inaccessible for a name this target does not serve. */
    @Override
    public io.pistore.spi.PathState pathState(String volume) {
        Volume v = store.get(volume);
        return v == null ? io.pistore.spi.PathState.INACCESSIBLE : v.pathState();
    }

    /** The volume's peers and their states ({@link Volume#pathGroup}); null for a name this target does not serve. */
    @Override
    public io.pistore.spi.PathGroup pathGroup(String volume) {
        Volume v = store.get(volume);
        return v == null ? null : v.pathGroup();
    }

    /** The state the volume's ports share ({@link Volume#sharedState}); null for a name this target does not serve. */
    @Override
    public io.pistore.spi.SharedVolumeState sharedState(String volume) {
        Volume v = store.get(volume);
        return v == null ? null : v.sharedState();
    }

    /** The volume's compare-and-write ordered with all its writes ({@link Volume#orderedCompareAndWrite}), or null. */
    @Override
    public io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        Volume v = store.get(volume);
        return v == null ? null : v.orderedCompareAndWrite();
    }

    /** Asks the volume to make that peer's path the optimized one ({@link Volume#optimizePath}). */
    @Override
    public void optimizePath(String volume, String replicaId) throws IOException {
        Volume v = store.get(volume);
        if (v == null) {
            throw new IOException("no volume " + volume);
        }
        v.optimizePath(replicaId);
    }

    @Override
    public void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done) {
        Volume v = store.get(request.volume());
        if (v != null && request.op() == io.pistore.spi.Operation.WRITE && v.writesAsync()) {
            // Started here, answered when the volume completes it: no thread waits for the quorum.
            executeWriteAsync(request, v, duty, done);
            return;
        }
        if (v != null && request.op() == io.pistore.spi.Operation.FLUSH && v.flushReturnsAtOnce()) {
            done.accept(executeCatching(request, duty)); // nothing to wait for: no hand-off
            return;
        }
        if (v != null && (request.op() == io.pistore.spi.Operation.READ ? v.readWaitsForPeers() : v.waitsForPeers())) {
            // An operation that waits for the network: never on a transport's I/O thread.
            threads.peerWaits().execute(() -> done.accept(executeCatching(request, duty)));
            return;
        }
        if (store.isDurable() && (request.op() == io.pistore.spi.Operation.FLUSH || request.fua())) {
            // A flush or FUA write waits for the disk: not on a transport's I/O thread, where it
            // would stall every other connection that thread serves.
            threads.diskWaits().execute(() -> done.accept(executeCatching(request, duty)));
            return;
        }
        done.accept(executeCatching(request, duty));
    }

    private Completion executeCatching(BlockRequest request, PiDuty duty) {
        try {
            return executeNow(request, duty);
        } catch (IOException | RuntimeException e) {
            return failure(request, e);
        }
    }

    /**
     * Whether {@code e} or a cause of it is the file system's ENOSPC: Java gives it only as the
     * system's message, which is this on Linux whatever the locale.
     */
    static boolean noSpace(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c.getMessage() != null && c.getMessage().contains("No space left on device")) {
                return true;
            }
        }
        return false;
    }

    /** The completion of a request that failed with {@code e}. */
    private static Completion failure(BlockRequest request, Throwable e) {
        if (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof io.pistore.engine.volume.VolumeGoneException) {
            return Completion.failure(Status.NO_SUCH_VOLUME, e.getMessage());
        }
        if (e instanceof io.pistore.engine.volume.FencedWriteException) {
            return Completion.failure(Status.FENCED, e.getMessage());
        }
        if (e instanceof io.pistore.engine.volume.ViewChangedException) {
            return Completion.failure(Status.VIEW_CHANGED, e.getMessage());
        }
        if (e instanceof io.pistore.engine.volume.PiRefusedException p) {
            return Completion.piError(p.lba(), p.error());
        }
        if (e instanceof IOException) {
            return Completion.failure(noSpace(e) ? Status.NO_SPACE : Status.MEDIA_ERROR,
                    request.op() + " lba=" + request.lba() + ": " + e.getMessage());
        }
        return Completion.failure(Status.INTERNAL_ERROR, request.op() + ": " + e);
    }

    /**
     * A write to a volume that completes writes by itself ({@link Volume#writesAsync}): checked and
     * started on the calling thread exactly as {@link #executeNow} would, answered from whichever
     * thread completes it.
     */
    private static void executeWriteAsync(BlockRequest r, Volume v, PiDuty duty,
            Consumer<Completion> done) {
        @SuppressWarnings("unchecked")
        java.util.concurrent.CompletableFuture<Void>[] started = new java.util.concurrent.CompletableFuture[1];
        Completion c;
        try {
            c = RequestCheck.validate(r, new VolumeInfo(v.name(), v.blockCount(), v.format()),
                    TransportCapabilities.MAX_TRANSFER_BYTES, true);
            if (c == null) {
                c = write(r, v, duty, started);
            }
        } catch (IOException | RuntimeException e) {
            c = failure(r, e);
        }
        if (started[0] == null) {
            done.accept(c);
            return;
        }
        started[0].whenComplete((x, t) -> done.accept(t == null ? Completion.success() : failure(r, t)));
    }

    /** Executes a request on the calling thread, with all its PI work left to the target. */
    public Completion executeNow(BlockRequest r) throws IOException {
        return executeNow(r, PiDuty.of(r.protection()));
    }

    /** Executes a request on the calling thread; {@code duty} says what PI work is left for the target. */
    public Completion executeNow(BlockRequest r, PiDuty duty) throws IOException {
        Volume v = store.get(r.volume());
        if (v == null) {
            return Completion.failure(Status.NO_SUCH_VOLUME, "no volume named '" + r.volume() + "'");
        }
        if (r.op() == io.pistore.spi.Operation.FLUSH) {
            v.flush();
            return Completion.success();
        }
        Completion bad = RequestCheck.validate(r, new VolumeInfo(v.name(), v.blockCount(), v.format()),
                TransportCapabilities.MAX_TRANSFER_BYTES, true);
        if (bad != null) {
            return bad;
        }
        switch (r.op()) {
            case WRITE:
                return write(r, v, duty);
            case READ:
                return read(r, v, duty);
            case WRITE_ZEROES:
            case DEALLOCATE:
                v.writeZeroes(r.lba(), r.blocks(), r.fua(), r.fence());
                return Completion.success();
            default:
                return Completion.failure(Status.INVALID_FIELD, "unknown operation " + r.op());
        }
    }

    private static Completion write(BlockRequest r, Volume v, PiDuty duty) throws IOException {
        return write(r, v, duty, null);
    }

    /**
     * Checks (or inserts) a write's PI and stores it; with {@code started}, the store is started
     * with {@link Volume#writeAsync} and its future left there (the success returned then means only
     * that the checks passed).
     */
    private static Completion write(BlockRequest r, Volume v, PiDuty duty,
            java.util.concurrent.CompletableFuture<Void>[] started) throws IOException {
        BlockFormat f = v.format();
        ScatterList meta = r.metadata();
        Protection p = r.protection();
        ScatterList scratch = null;
        MetadataScratch mine = null;
        try {
            if (f.hasPi()) {
                if (duty.generates(PiDuty.Hop.TARGET)) {
                    // Insert: with metadata exactly the tuple, the host's metadata (if any) is replaced;
                    // with more, only the tuple part is overwritten (NVMe PRACT semantics).
                    PiContext ctx = p.context(f);
                    if (meta != null && f.metadataSize() > f.tupleSize()) {
                        meta = copy(meta);
                    } else {
                        mine = MetadataScratch.mine();
                        meta = scratch = mine.take(r.blocks() * f.metadataSize());
                        if (f.metadataSize() > f.tupleSize()) {
                            zero(meta); // generate writes the tuple only; the rest of the metadata is zero
                        }
                    }
                    Pi.generate(ctx, r.data(), meta, r.blocks());
                    // Generated here from the data: right by construction, as if every field were checked.
                    duty = duty.checkedBy(PiDuty.Hop.TARGET, CheckFlags.ALL);
                } else if (!duty.left().isNone()) {
                    PiError e = Pi.verify(left(p, duty, f), r.data(), meta, r.blocks());
                    if (e != null) {
                        return Completion.piError(r.lba(), e);
                    }
                    duty = duty.checkedBy(PiDuty.Hop.TARGET);
                }
            }
            if (f.type() == PiType.TYPE_1 && p.initialRefTag() != f.refTagOf(r.lba())) {
                // Type 1: the reference tag follows the LBA (NVMe: ILBRT must equal the low bits of SLBA).
                // Checked after the PI itself, so a PI that does not match the request is reported as
                // such; this catches the PI that matches a request whose LBA was changed on the way (a
                // header bit flip without a digest), which would otherwise be stored at the wrong place:
                // a lost write. expected: the tag this LBA needs; actual: the one the request carries.
                return Completion.piError(r.lba(), new PiError(PiErrorKind.REF_TAG, 0,
                        f.refTagOf(r.lba()), p.initialRefTag()));
            }
            if (started != null) {
                started[0] = v.writeAsync(r.lba(), r.blocks(), r.data(), meta, r.fua(), duty, r.fence());
            } else {
                v.write(r.lba(), r.blocks(), r.data(), meta, r.fua(), duty);
            }
            return Completion.success();
        } finally {
            if (scratch != null) {
                mine.release(scratch);
            }
        }
    }

    /** The context that checks the fields of {@code p} no hop has taken on yet. */
    private static PiContext left(Protection p, PiDuty duty, BlockFormat f) {
        CheckFlags left = duty.left();
        return left == p.checks() ? p.context(f)
                : PiContext.of(f, left, p.initialRefTag(), p.appTag(), p.appMask());
    }

    private static Completion read(BlockRequest r, Volume v, PiDuty duty) throws IOException {
        if (r.isMetadataOnly()) { // nothing to check: the caller reads the data of what it must check
            v.readMetadata(r.lba(), r.blocks(), r.metadata());
            return Completion.success();
        }
        BlockFormat f = v.format();
        ScatterList meta = r.metadata();
        // Strip (no metadata list in the request): with PI, the stored metadata is read, checked and
        // dropped; without PI there is nothing to check, and the volume is not asked for it.
        boolean strip = meta == null && f.hasPi();
        MetadataScratch mine = null;
        if (strip) {
            mine = MetadataScratch.mine();
            meta = mine.take(r.blocks() * f.metadataSize());
        }
        try {
            v.read(r.lba(), r.blocks(), r.data(), meta, r.receivedNanos());
            if (f.hasPi()) {
                // Always, whoever checks the PI: the unwritten pattern is an escape that no PI check
                // (here, in a transport, or at the host) looks behind. A replicated volume's read
                // checks the same rule to heal a block from another replica, but hands on a block bad
                // on every replica for this check to report.
                PiError bad = UnwrittenBlock.firstDataError(f, r.data(), meta, r.blocks());
                if (bad != null) {
                    return Completion.piError(r.lba(), bad);
                }
                if (!duty.left().isNone()) {
                    PiError e = Pi.verify(left(r.protection(), duty, f), r.data(), meta, r.blocks());
                    if (e != null) {
                        return Completion.piError(r.lba(), e);
                    }
                }
            }
            return Completion.success();
        } finally {
            if (strip) {
                mine.release(meta);
            }
        }
    }

    private static void zero(ScatterList l) {
        for (int i = 0; i < l.segmentCount(); i++) {
            ByteBuffer b = l.segment(i);
            while (b.hasRemaining()) {
                b.put((byte) 0);
            }
        }
    }

    private static ScatterList copy(ScatterList src) {
        byte[] a = src.toArray();
        return ScatterList.wrap(a);
    }
}
