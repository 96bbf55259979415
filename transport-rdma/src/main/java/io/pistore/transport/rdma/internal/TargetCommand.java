package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.SendWr;

/** The target's state for one command id of a connection. */
final class TargetCommand {
    final int cid;
    final Capsule.Command cmd = new Capsule.Command();
    final SendWr reg = new SendWr(1);
    final SendWr data = new SendWr(1);
    final SendWr inv = new SendWr(1);
    final SendWr rsp = new SendWr(1);
    final MrStatus status = new MrStatus();

    BlockRequest request;
    BlockFormat format;
    IntegrityMr mr;
    MemoryRegion staging;
    MemoryRegion discovery;
    ScatterList dataList;
    ScatterList metaList;
    boolean offload;

    TargetCommand(int cid) {
        this.cid = cid;
    }
}
