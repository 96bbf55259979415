package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.IntegrityMrPool;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;

/**
 * Posts a host queue's commands: per READ/WRITE that the NIC can carry, an integrity MR from the
 * queue's pool, mapped and given the signature attributes, and REG_MR_INTEGRITY chained before the
 * fenced command SEND (after a LOCAL_INV of a key an earlier use left valid); any other request
 * through the slot's registered staging buffer, with PI left to software. Invariant: the SEND that
 * hands a key to the target never starts before that key's registration executed, and a slot's
 * command capsule is written only into that slot's part of the command buffer. The caller owns the
 * slot until the request completes.
 */
final class HostCommandPoster {
    private final RdmaHostConnection owner;
    private final ProtectionDomain pd;
    private final IntegrityMrPool pool;
    private final ByteBuffer cmd;
    private final MemoryRegion cmdMr;
    private final QueuePair qp;
    /** The connection's fence ({@link io.pistore.spi.WriteFence}), set before its first command; null: none. */
    volatile io.pistore.spi.WriteFence fence;

    /** Posts on {@code qp}, with capsules in {@code cmdMr} (a slot each) and MRs from {@code pool} (null: software only). */
    HostCommandPoster(RdmaHostConnection owner, ProtectionDomain pd, IntegrityMrPool pool, MemoryRegion cmdMr,
                      QueuePair qp) {
        this.owner = owner;
        this.pd = pd;
        this.pool = pool;
        this.cmdMr = cmdMr;
        this.cmd = cmdMr.buffer();
        this.qp = qp;
    }

    /** Posts {@code r}'s command in slot {@code s}: through an integrity MR where it can, else through the slot's staging buffer. */
    void start(HostSlot s, BlockRequest r) throws VerbsException {
        VolumeInfo v = owner.volume(r.volume());
        s.format = v == null ? null : v.format();
        if (r.isMetadataOnly()) {
            startSoftware(s, r);
            return;
        }
        boolean data = r.op() == Operation.READ || r.op() == Operation.WRITE;
        if (data && v != null && owner.offloads(v) && pool != null && offloadable(r, v.format())) {
            startOffload(s, r, v);
        } else {
            if (data && v != null) {
                owner.notePath(v, false);
            }
            startSoftware(s, r);
        }
    }

    /** Whether the request is well formed for the integrity MR path; otherwise the software path lets the target judge it. */
    private static boolean offloadable(BlockRequest r, BlockFormat f) {
        long n = r.blocks();
        if (n < 1 || n * (f.dataSize() + 8L) > TransportCapabilities.MAX_TRANSFER_BYTES) {
            return false;
        }
        if (r.data().length() != n * f.dataSize()) {
            return false;
        }
        if (r.hasMetadata() && r.metadata().length() != n * f.metadataSize()) {
            return false;
        }
        Protection p = r.protection();
        if (r.op() == Operation.WRITE && !p.pract() && !r.hasMetadata()) {
            return false;
        }
        return (p.initialRefTag() & ~0xFFFFFFFFL) == 0;
    }

    private void startOffload(HostSlot s, BlockRequest r, VolumeInfo v) throws VerbsException {
        BlockFormat f = v.format();
        IntegrityMr mr = pool.take();
        if (mr == null) {
            throw new IllegalStateException("integrity MR pool empty with a free slot");
        }
        s.mr = mr;
        s.path = HostSlot.PATH_OFFLOAD;
        owner.notePath(v, true);
        boolean write = r.op() == Operation.WRITE;
        Protection p = r.protection();
        boolean memPi = write ? !p.pract() : r.hasMetadata();
        ScatterList dl = r.data();
        ScatterList ml = memPi ? r.metadata() : ScatterList.of();
        if (dl.segmentCount() > mr.maxDataSg()) {
            s.userData = dl;
            dl = Buffers.contiguous(dl, write);
            s.bounceData = dl;
        }
        if (ml.segmentCount() > mr.maxMetaSg()) {
            s.userMeta = ml;
            ml = Buffers.contiguous(ml, write);
            s.bounceMeta = ml;
        }
        mr.map(dl, ml, RdmaHostQueue.PAGE_SIZE);
        SignatureMapping.setHostAttrs(mr.sigAttrs(), f, write, p, memPi);
        long wire = SignatureMapping.wireLength(mr.sigAttrs(), f, r.blocks());
        SendWr first = null;
        if (mr.needsInvalidate()) {
            // an earlier use left its key valid (its invalidate could not be posted): rdma_rw_inv_key
            SendWr inv = s.inv.reset();
            inv.wrId = RdmaHostQueue.T_INV | s.cid;
            inv.opcode = WrOpcode.LOCAL_INV;
            inv.invalidateKey = mr.rkey();
            first = inv;
        }
        int key = mr.nextKey();
        s.key = key;
        SendWr reg = s.reg.reset();
        reg.wrId = RdmaHostQueue.T_REG | s.cid;
        reg.opcode = WrOpcode.REG_MR_INTEGRITY;
        reg.mr = mr;
        reg.key = key;
        reg.access = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
        int flags = Capsule.F_OFFLOAD | (r.fua() ? Capsule.F_FUA : 0); // PRACT cleared: the NIC inserts/strips
        int len = Capsule.encode(cmd, s.cid * Capsule.SIZE, Capsule.opCode(r.op()), flags, s.cid, p, r.blocks(),
                r.lba(), mr.iova(), wire, key, 0, owner.nameBytes(r.volume()));
        Capsule.putFence(cmd, s.cid * Capsule.SIZE, fence, r.seqIn(fence)); // its number
        SendWr send = s.send.reset();
        send.wrId = RdmaHostQueue.T_SEND | s.cid;
        send.opcode = WrOpcode.SEND;
        send.signaled = true;
        // the SEND hands the key to the target: it must not start before the registration executed
        // (mlx5 fences the WR after a REG_MR_INTEGRITY itself; a provider that does not gets the flag)
        send.fence = true;
        send.addSge(cmdMr.addr(s.cid * Capsule.SIZE), len, cmdMr.lkey());
        reg.next = send;
        if (first != null) {
            first.next = reg;
        } else {
            first = reg;
        }
        qp.postSend(first);
    }

    private void startSoftware(HostSlot s, BlockRequest r) throws VerbsException {
        s.path = HostSlot.PATH_SOFTWARE;
        boolean data = r.op() == Operation.READ || r.op() == Operation.WRITE;
        long dataLen = data && !r.isMetadataOnly() ? r.data().length() : 0;
        boolean meta = data && r.hasMetadata();
        long metaLen = meta ? r.metadata().length() : 0;
        long len = dataLen + metaLen;
        if (len > TransportCapabilities.MAX_TRANSFER_BYTES + (1 << 20)) {
            throw new IllegalArgumentException("request of " + len + " bytes exceeds the largest transfer");
        }
        long addr = 0;
        int key = 0;
        if (len > 0) {
            if (s.staging == null || s.staging.length() < len) {
                if (s.staging != null) {
                    s.staging.close();
                }
                s.staging = pd.register(ByteBuffer.allocateDirect((int) Math.max(len, 4096)),
                        Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            }
            if (r.op() == Operation.WRITE) {
                ByteBuffer b = s.staging.buffer();
                Buffers.gather(r.data(), b, 0);
                if (meta) {
                    Buffers.gather(r.metadata(), b, (int) dataLen);
                }
            }
            addr = s.staging.iova();
            key = s.staging.rkey();
        }
        int flags = (r.fua() ? Capsule.F_FUA : 0) | (r.protection().pract() ? Capsule.F_PRACT : 0)
                | (meta ? Capsule.F_META : 0) | (r.isMetadataOnly() ? Capsule.F_METADATA_ONLY : 0);
        int n = Capsule.encode(cmd, s.cid * Capsule.SIZE, Capsule.opCode(r.op()), flags, s.cid, r.protection(),
                r.blocks(), r.lba(), addr, len, key, dataLen, owner.nameBytes(r.volume()));
        Capsule.putFence(cmd, s.cid * Capsule.SIZE, fence, r.seqIn(fence)); // its number
        SendWr send = s.send.reset();
        send.wrId = RdmaHostQueue.T_SEND | s.cid;
        send.signaled = true;
        send.addSge(cmdMr.addr(s.cid * Capsule.SIZE), n, cmdMr.lkey());
        qp.postSend(send);
    }
}
