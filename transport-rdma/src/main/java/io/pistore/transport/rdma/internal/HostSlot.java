package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.SendWr;
import java.util.concurrent.CompletableFuture;

/** One command slot of a host queue (its command id): the request in flight and its reusable WRs. */
final class HostSlot {
    static final int PATH_NONE = 0;
    static final int PATH_OFFLOAD = 1;
    static final int PATH_SOFTWARE = 2;

    final int cid;
    final SendWr reg = new SendWr(1);
    final SendWr send = new SendWr(1);
    final SendWr inv = new SendWr(1);
    final MrStatus status = new MrStatus();

    BlockRequest request;
    BlockFormat format;
    CompletableFuture<Completion> future;
    int path;
    /** When the request was submitted ({@link System#nanoTime}): the request timeout counts from here. */
    long sentNanos;
    IntegrityMr mr;
    /** The key the request's REG_MR_INTEGRITY made valid (the one its LOCAL_INV names). */
    int key;
    /** The completion waiting for the LOCAL_INV of {@link #key} to complete (nvme-rdma ends the request then). */
    Completion pending;
    /** The MR's status is still to be checked when the LOCAL_INV completes (an aborted request). */
    boolean checkAtInvalidate;
    MemoryRegion staging;
    /** Read into a bounce buffer (the user's list had too many segments): copy back into these. */
    ScatterList bounceData;
    ScatterList bounceMeta;
    ScatterList userData;
    ScatterList userMeta;

    HostSlot(int cid) {
        this.cid = cid;
    }

    void clear() {
        request = null;
        format = null;
        future = null;
        path = PATH_NONE;
        mr = null;
        key = 0;
        pending = null;
        checkAtInvalidate = false;
        bounceData = null;
        bounceMeta = null;
        userData = null;
        userMeta = null;
    }
}
