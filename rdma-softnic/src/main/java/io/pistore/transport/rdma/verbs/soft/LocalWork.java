package io.pistore.transport.rdma.verbs.soft;

/**
 * When the soft NIC executes local work (REG_MR_INTEGRITY, LOCAL_INV). A real NIC executes it after
 * {@code ib_post_send} returned, so code that relies on a registration or an invalidate having
 * happened when the post returns is wrong there; the asynchronous modes make such code fail here.
 */
public enum LocalWork {
    /** Inside {@code postSend}, on the posting thread (the default: cheapest). */
    INLINE,
    /** On the soft NIC's timer thread, soon after the post, in posting order per QP. */
    ASYNC,
    /** Only when a test calls {@link SoftDevice#runLocalWork}, in posting order per QP. */
    MANUAL
}
