package io.pistore.transport.rdma.verbs;

import java.util.ArrayList;
import java.util.List;

/**
 * A per-queue pool of integrity MRs ({@code ib_mr_pool_init(qp, &qp->sig_mrs, n,
 * IB_MR_TYPE_INTEGRITY, max_sg, max_meta_sg)}, {@code ib_mr_pool_get}, {@code ib_mr_pool_put}).
 * {@link #take} returns null when empty, as {@code ib_mr_pool_get} does. Allocation-free after
 * construction.
 */
public final class IntegrityMrPool implements AutoCloseable {
    private final IntegrityMr[] all;
    private final IntegrityMr[] free;
    private int top;
    private int used;

    public IntegrityMrPool(ProtectionDomain pd, int count, int maxDataSg, int maxMetaSg) throws VerbsException {
        all = new IntegrityMr[count];
        free = new IntegrityMr[count];
        try {
            for (int i = 0; i < count; i++) {
                all[i] = pd.allocIntegrityMr(maxDataSg, maxMetaSg);
                free[top++] = all[i];
            }
        } catch (VerbsException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** An MR, or null when all are in use. */
    public synchronized IntegrityMr take() {
        if (top == 0) {
            return null;
        }
        used++;
        IntegrityMr m = free[--top];
        free[top] = null;
        return m;
    }

    public synchronized void put(IntegrityMr mr) {
        if (top == free.length) {
            throw new IllegalStateException("pool overflow: an MR was returned twice");
        }
        used--;
        free[top++] = mr;
    }

    public synchronized int inUse() {
        return used;
    }

    public int size() {
        return all.length;
    }

    @Override
    public void close() {
        List<IntegrityMr> l = new ArrayList<>();
        for (IntegrityMr m : all) {
            if (m != null) l.add(m);
        }
        for (IntegrityMr m : l) {
            m.close();
        }
    }
}
