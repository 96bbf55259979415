package io.pistore.transport.tcp.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A small target handler for transport tests: one volume in memory, with the target service's PI
 * rules (check and insert what the request's PiDuty leaves to the target), recording every call.
 * {@link #hold} keeps completions back so tests can reorder or abandon them.
 */
final class MemoryHandler implements TargetHandler {
    static final String VOLUME = "v";

    final String name;
    final BlockFormat format;
    final long blocks;
    final byte[] data;
    final byte[] meta;
    final List<BlockRequest> requests = new CopyOnWriteArrayList<>();
    final List<io.pistore.spi.PiDuty> duties = new CopyOnWriteArrayList<>();
    volatile boolean hold;
    /** Whether this handler serves metadata-only reads ({@link #readsMetadataOnly}); a target asks at each HELLO. */
    volatile boolean servesMetadataOnly;
    /** Whether writes find the storage full: answered NO_SPACE, nothing stored. */
    volatile boolean full;
    final List<Runnable> held = Collections.synchronizedList(new ArrayList<>());
    final ConcurrentHashMap<Long, Boolean> written = new ConcurrentHashMap<>();

    MemoryHandler(BlockFormat format, long blocks) {
        this(VOLUME, format, blocks);
    }

    /** A handler whose one volume is called {@code name}. */
    MemoryHandler(String name, BlockFormat format, long blocks) {
        this.name = name;
        this.format = format;
        this.blocks = blocks;
        this.data = new byte[(int) (blocks * format.dataSize())];
        this.meta = new byte[(int) (blocks * format.metadataSize())];
    }

    final List<String> connections = new CopyOnWriteArrayList<>();

    @Override
    public void connected(String peer) {
        connections.add("connected " + peer);
    }

    @Override
    public void disconnected(String peer, String reason) {
        connections.add("disconnected " + peer + " " + reason);
    }

    @Override
    public boolean readsMetadataOnly() {
        return servesMetadataOnly;
    }

    @Override
    public List<VolumeInfo> volumes() {
        return List.of(new VolumeInfo(name, blocks, format));
    }

    @Override
    public void execute(BlockRequest r, io.pistore.spi.PiDuty duty, Consumer<Completion> done) {
        requests.add(r);
        duties.add(duty);
        Completion c = full && r.op() == io.pistore.spi.Operation.WRITE
                ? Completion.failure(Status.NO_SPACE, "WRITE lba=" + r.lba() + ": No space left on device") : run(r, duty);
        if (hold) {
            held.add(() -> done.accept(c));
        } else {
            done.accept(c);
        }
    }

    /** Completes held requests, last first, from another thread. */
    void releaseReversed() {
        List<Runnable> l;
        synchronized (held) {
            l = new ArrayList<>(held);
            held.clear();
        }
        Collections.reverse(l);
        Thread t = new Thread(() -> l.forEach(Runnable::run));
        t.start();
    }

    private synchronized Completion run(BlockRequest r, io.pistore.spi.PiDuty duty) {
        boolean checked = duty.left().isNone();
        int ds = format.dataSize();
        int ms = format.metadataSize();
        if (r.op() == Operation.FLUSH || r.op() == Operation.WRITE_ZEROES || r.op() == Operation.DEALLOCATE) {
            return Completion.success();
        }
        if (r.isMetadataOnly()) {
            copy(meta, (int) r.lba() * ms, r.metadata());
            return Completion.success();
        }
        PiContext ctx = PiContext.builder(format).checks(r.protection().checks())
                .initialRefTag(r.protection().initialRefTag()).appTag(r.protection().appTag())
                .appMask(r.protection().appMask()).build();
        int off = (int) r.lba();
        int n = r.blocks();
        ScatterList d = ScatterList.of(java.nio.ByteBuffer.wrap(data, off * ds, n * ds));
        ScatterList m = ScatterList.of(java.nio.ByteBuffer.wrap(meta, off * ms, n * ms));
        if (r.op() == Operation.WRITE) {
            if (duty.generates(io.pistore.spi.PiDuty.Hop.TARGET) && r.metadata() == null) {
                byte[] a = r.data().toArray();
                System.arraycopy(a, 0, data, off * ds, a.length);
                Pi.generate(ctx, d, m, n);
                return Completion.success();
            }
            if (!checked && format.hasPi()) {
                PiError e = Pi.verify(ctx, r.data(), r.metadata(), n);
                if (e != null) {
                    return Completion.piError(r.lba(), e);
                }
            }
            byte[] a = r.data().toArray();
            System.arraycopy(a, 0, data, off * ds, a.length);
            if (r.metadata() != null) {
                byte[] b = r.metadata().toArray();
                System.arraycopy(b, 0, meta, off * ms, b.length);
            }
            for (int i = 0; i < n; i++) {
                written.put(r.lba() + i, true);
            }
            return Completion.success();
        }
        // READ
        copy(data, off * ds, r.data());
        if (r.metadata() != null) {
            copy(meta, off * ms, r.metadata());
        }
        if (!checked && format.hasPi()) {
            PiError e = Pi.verify(ctx, d, m, n);
            if (e != null) {
                return Completion.piError(r.lba(), e);
            }
        }
        return Completion.success();
    }

    private static void copy(byte[] src, int off, ScatterList dst) {
        int at = off;
        for (int i = 0; i < dst.segmentCount(); i++) {
            java.nio.ByteBuffer s = dst.segment(i);
            int len = s.remaining();
            s.put(src, at, len);
            at += len;
        }
    }

    Completion failure(String why) {
        return Completion.failure(Status.INTERNAL_ERROR, why);
    }
}
