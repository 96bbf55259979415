package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A DiSNI protection domain: plain registrations only (DiSNI binds no integrity MR). */
final class DisniPd implements ProtectionDomain {
    /** {@code enum ibv_access_flags} (the ABI values; ours are the same bits, mapped explicitly). */
    static final int IBV_ACCESS_LOCAL_WRITE = 1;
    static final int IBV_ACCESS_REMOTE_WRITE = 2;
    static final int IBV_ACCESS_REMOTE_READ = 4;

    private final DisniOps ops;
    final DisniOps.Pd pd;
    private final Set<DisniMr> mrs = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    DisniPd(DisniOps ops, DisniOps.Pd pd) {
        this.ops = ops;
        this.pd = pd;
    }

    static int ibvAccess(int access) {
        int a = 0;
        if ((access & Access.LOCAL_WRITE) != 0) a |= IBV_ACCESS_LOCAL_WRITE;
        if ((access & Access.REMOTE_WRITE) != 0) a |= IBV_ACCESS_REMOTE_WRITE;
        if ((access & Access.REMOTE_READ) != 0) a |= IBV_ACCESS_REMOTE_READ;
        // ibv_reg_mr: remote write needs local write
        if ((a & IBV_ACCESS_REMOTE_WRITE) != 0) a |= IBV_ACCESS_LOCAL_WRITE;
        return a;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException {
        if (closed) {
            throw new VerbsException(VerbsException.EINVAL, "disni: the protection domain is deallocated");
        }
        if (!buffer.isDirect()) {
            throw new VerbsException(VerbsException.EINVAL, "disni registers direct buffers only (a heap buffer"
                    + " can move)");
        }
        if (!buffer.hasRemaining()) {
            throw new VerbsException(VerbsException.EINVAL, "disni: cannot register an empty range");
        }
        ByteBuffer range = buffer.slice();
        try {
            DisniOps.Mr mr = ops.regMr(pd, range, ibvAccess(access));
            DisniMr m = new DisniMr(this, mr, range);
            mrs.add(m);
            return m;
        } catch (IOException e) {
            VerbsException v = new VerbsException(VerbsException.ENOMEM, "disni: ibv_reg_mr of " + range.remaining()
                    + " bytes failed: " + DisniProbe.firstLine(String.valueOf(e.getMessage())));
            v.initCause(e);
            throw v;
        }
    }

    void deregister(DisniMr m) {
        if (mrs.remove(m)) {
            ops.deregMr(m.mr);
        }
    }

    @Override
    public IntegrityMr allocIntegrityMr(int maxDataSg, int maxMetaSg) throws VerbsException {
        throw new VerbsException(VerbsException.EOPNOTSUPP, "disni: no integrity MR (DiSNI 2.1 binds no"
                + " signature/integrity memory region); the rdma transport does PI in software on this provider");
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (DisniMr m : mrs) {
            deregister(m);
        }
        ops.deallocPd(pd);
    }
}
