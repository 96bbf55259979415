package io.pistore.transport.rdma.verbs.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The seam between the DiSNI binding and DiSNI itself: one method per DiSNI call the binding makes,
 * nothing else. {@link RealDisniOps} implements it over {@code com.ibm.disni.verbs}; tests replace
 * it, so the logic around the calls (the connection-manager state machine with its deadlines, the
 * connect handshake, the SVC caches, the completion mapping) runs without libdisni or a NIC.
 *
 * <p>Handles are opaque to the binding. Work requests, completions and the stateful verb calls
 * ({@link SVCPostSend}, {@link SVCPostRecv}, {@link SVCPollCq}) are DiSNI's own types: the first two
 * are plain Java, the SVCs are abstract classes a test can subclass.
 */
interface DisniOps {
    /** {@code struct rdma_event_channel}. */
    interface Channel {
    }

    /** {@code struct rdma_cm_id}. */
    interface Id {
    }

    /** {@code struct ibv_context}. */
    interface Ctx {
    }

    /** {@code struct ibv_pd}. */
    interface Pd {
    }

    /** {@code struct ibv_cq} with its completion channel. */
    interface Cq {
    }

    /** {@code struct ibv_qp}. */
    interface Qp {
    }

    /** {@code struct ibv_mr}: the handle and what the binding reads from it. */
    record Mr(Object handle, long addr, int length, int lkey, int rkey) {
    }

    /** One connection-manager event, already acknowledged; {@code id} is the id it concerns. */
    record CmEvent(CmEventType type, Id id, Id listenId) {
    }

    Channel createEventChannel() throws IOException;

    void destroyEventChannel(Channel ch);

    Id createId(Channel ch) throws IOException;

    void bindAddr(Id id, InetSocketAddress addr) throws IOException;

    void listen(Id id, int backlog) throws IOException;

    void resolveAddr(Id id, InetSocketAddress dst, int timeoutMs) throws IOException;

    void resolveRoute(Id id, int timeoutMs) throws IOException;

    /** The next event, acknowledged, or null after {@code timeoutMs}. */
    CmEvent getCmEvent(Channel ch, int timeoutMs) throws IOException;

    /** {@code rdma_connect}; DiSNI fixes the initiator depth to the device's maximum. */
    void connect(Id id, int retryCount, int rnrRetryCount) throws IOException;

    /** {@code rdma_accept}, without private data (DiSNI sends none on accept). */
    void accept(Id id, int rnrRetryCount) throws IOException;

    void disconnect(Id id);

    void destroyQp(Id id);

    void destroyId(Id id);

    InetSocketAddress source(Id id) throws IOException;

    InetSocketAddress destination(Id id) throws IOException;

    /** {@code id->verbs}: the device the id is bound or resolved to, or null. */
    Ctx context(Id id) throws IOException;

    /** Whether two contexts are the same device. */
    boolean sameDevice(Ctx a, Ctx b) throws IOException;

    Pd allocPd(Ctx ctx) throws IOException;

    void deallocPd(Pd pd);

    /** A completion channel and a CQ of at least {@code entries} on it. */
    Cq createCq(Ctx ctx, int entries) throws IOException;

    void destroyCq(Cq cq);

    /** {@code rdma_create_qp} (RC; libdisni fixes the SGE limits at 4). */
    Qp createQp(Id id, Pd pd, Cq sendCq, Cq recvCq, int maxSendWr, int maxRecvWr, int maxInline) throws IOException;

    int qpNum(Qp qp) throws IOException;

    Mr regMr(Pd pd, ByteBuffer buffer, int ibvAccess) throws IOException;

    void deregMr(Mr mr);

    /** A stateful post-send call over the list, not yet executed. */
    SVCPostSend postSend(Qp qp, List<IbvSendWR> wrs) throws IOException;

    /** A stateful post-receive call over the list, not yet executed. */
    SVCPostRecv postRecv(Qp qp, List<IbvRecvWR> wrs) throws IOException;

    /** A stateful poll of up to {@code n} completions into {@code wcs}. */
    SVCPollCq poll(Cq cq, IbvWC[] wcs, int n) throws IOException;

    /** {@code ibv_req_notify_cq(cq, 0)}. */
    void requestNotify(Cq cq) throws IOException;

    /** Waits up to {@code timeoutMs} for a CQ event and acknowledges it; true when one came. */
    boolean awaitCqEvent(Cq cq, int timeoutMs) throws IOException;
}
