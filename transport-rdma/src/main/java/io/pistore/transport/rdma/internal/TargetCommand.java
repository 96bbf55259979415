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
    /** The PI duty of an offloaded request: what the integrity MR generated and checks. */
    io.pistore.spi.PiDuty duty;
    BlockFormat format;
    IntegrityMr mr;
    MemoryRegion staging;
    MemoryRegion discovery;
    ScatterList dataList;
    ScatterList metaList;
    /**
     * The offload path's data and separate metadata buffers, kept for the next command of this id
     * (a command id is reused only after its response): the integrity MR's RDMA READ or the
     * engine's read overwrites every byte a request uses.
     */
    java.nio.ByteBuffer offloadData;
    java.nio.ByteBuffer offloadMeta;
    boolean offload;
    /** Waiting for an integrity MR: the transfer to start when one returns is a write's RDMA READ. */
    boolean waitingWrite;

    TargetCommand(int cid) {
        this.cid = cid;
    }
}
