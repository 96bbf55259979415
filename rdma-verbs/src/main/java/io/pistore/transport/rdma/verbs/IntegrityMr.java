package io.pistore.transport.rdma.verbs;

import io.pistore.integrity.ScatterList;

/**
 * An integrity MR ({@code IB_MR_TYPE_INTEGRITY}): one registration covering the data and the
 * metadata of one request, holding its signature attributes.
 *
 * <p>Life of one use (nvme-rdma's order): {@link #map} both lists; fill {@link #sigAttrs()}; post
 * {@link WrOpcode#REG_MR_INTEGRITY} with {@link #nextKey()} (which makes that key valid and every
 * older key of this MR invalid); let the peer or the local QP move data through it; call
 * {@link #checkStatus} (required before the next registration, which the provider otherwise refuses,
 * as mlx5 does); invalidate the key; give the MR back to its pool.
 */
public interface IntegrityMr extends AutoCloseable {
    int maxDataSg();

    int maxMetaSg();

    /** The key of the current (or last) registration; lkey and rkey are the same. */
    int lkey();

    int rkey();

    /** The key the next registration should use: same MR index, next 8-bit variant ({@code ib_inc_rkey}). */
    default int nextKey() {
        int k = rkey();
        return (k & 0xFFFFFF00) | ((k + 1) & 0xFF);
    }

    /** 0: the address space is zero-based, data first then metadata. */
    long iova();

    /** Data plus metadata bytes as laid out in memory, after {@link #map}. */
    long length();

    long dataLength();

    /** Metadata bytes mapped (also recorded in {@code sigAttrs().metaLength}). */
    long metaLength();

    /** The signature attributes the next registration will use ({@code mr->sig_attrs}). */
    SigAttrs sigAttrs();

    /**
     * {@code ib_map_mr_sg_pi}: maps the data list and the metadata list (which may be empty: PI
     * inserted or stripped by the NIC) into one zero-based address space, data at 0 and metadata at
     * {@code dataLength}. Fails when a list has more segments than the MR was allocated for.
     */
    void map(ScatterList data, ScatterList meta, int pageSize) throws VerbsException;

    /**
     * {@code mr->need_inval}: a registration of this MR was posted and no LOCAL_INV of it (nor a
     * remote invalidation) since, so its key may still be valid. Whoever takes the MR from its pool
     * invalidates first when this is true ({@code rdma_rw_inv_key}).
     */
    boolean needsInvalidate();

    /**
     * {@code ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st)}: fills {@code out} with the
     * signature error latched since the last registration (or none), clears it, and allows the MR to
     * be registered again. When the check itself fails (a deregistered MR) {@link MrStatus#errno} is
     * set instead.
     */
    MrStatus checkStatus(MrStatus out);

    @Override
    void close();
}
