package io.pistore.transport.rdma.verbs.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.Sge;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.io.IOException;
import java.util.List;

/**
 * A DiSNI RC queue pair. Posting goes through DiSNI's stateful verb calls, which serialise a work
 * request list once into native memory and then let wr_id, send flags, remote address and key, and
 * SGE address/length/key be patched in place. Opcode and SGE count cannot be patched, so one
 * {@link SVCPostSend} is cached per <em>chain shape</em> (the opcode and SGE count of each request,
 * up to {@link #MAX_CACHED_CHAIN} requests), and a repeated shape costs no serialisation and no
 * garbage. Receives are cached per wr_id (the transport reposts each slot's receive with the same
 * id and buffer); a receive whose SGEs changed is serialised again.
 */
final class DisniQp implements QueuePair {
    static final int MAX_CACHED_CHAIN = 7;
    static final int SEND_CACHE = 16;

    private final DisniOps ops;
    private final DisniOps.Qp qp;
    private final int qpNum;
    private volatile QpState state = QpState.RTS;

    private final long[] shapes = new long[SEND_CACHE];
    private final SVCPostSend[] sendCalls = new SVCPostSend[SEND_CACHE];
    private int sendCached;
    private int evict;
    private long sendSerialisations;

    private final LongMap<RecvEntry> recvCalls = new LongMap<>();
    private long recvSerialisations;

    private static final class RecvEntry {
        final long[] addr;
        final int[] len;
        final int[] lkey;
        final SVCPostRecv call;

        RecvEntry(RecvWr w, SVCPostRecv call) {
            addr = new long[w.numSge];
            len = new int[w.numSge];
            lkey = new int[w.numSge];
            for (int i = 0; i < w.numSge; i++) {
                addr[i] = w.sgl[i].addr;
                len[i] = w.sgl[i].length;
                lkey[i] = w.sgl[i].lkey;
            }
            this.call = call;
        }

        boolean matches(RecvWr w) {
            if (w.numSge != addr.length) {
                return false;
            }
            for (int i = 0; i < addr.length; i++) {
                Sge s = w.sgl[i];
                if (s.addr != addr[i] || s.length != len[i] || s.lkey != lkey[i]) {
                    return false;
                }
            }
            return true;
        }
    }

    DisniQp(DisniOps ops, DisniOps.Qp qp, int qpNum) {
        this.ops = ops;
        this.qp = qp;
        this.qpNum = qpNum;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpState state() {
        return state;
    }

    /** The peer disconnected or a completion failed: hardware flushes what is posted. */
    void toError() {
        if (state == QpState.RTS) {
            state = QpState.ERROR;
        }
    }

    /**
     * The shape of a chain as a key: bits 0-3 the number of requests, then 6 bits per request (3 for
     * the opcode, 3 for the SGE count); -1 for chains too long to cache. Refuses what DiSNI cannot post.
     */
    static long shapeOf(SendWr chain) throws VerbsException {
        long key = 0;
        int n = 0;
        for (SendWr w = chain; w != null; w = w.next) {
            int op;
            switch (w.opcode) {
                case SEND: op = 1; break;
                case RDMA_WRITE: op = 2; break;
                case RDMA_READ: op = 3; break;
                default:
                    throw DisniWorkRequests.unsupported(w.opcode);
            }
            if (w.numSge < 0 || w.numSge > DisniVerbsProvider.MAX_SGE) {
                throw new VerbsException(VerbsException.EINVAL, "a work request has " + w.numSge
                        + " SGEs; libdisni creates QPs with " + DisniVerbsProvider.MAX_SGE);
            }
            if (n < MAX_CACHED_CHAIN) {
                key |= (long) ((op << 3) | w.numSge) << (4 + 6 * n);
            }
            n++;
        }
        if (n == 0) {
            throw new VerbsException(VerbsException.EINVAL, "empty work request chain");
        }
        return n > MAX_CACHED_CHAIN ? -1 : key | n;
    }

    /** Copies what a cached call can patch from our chain into it. */
    static void patch(SVCPostSend call, SendWr chain) throws IOException {
        int i = 0;
        for (SendWr w = chain; w != null; w = w.next, i++) {
            SVCPostSend.SendWRMod m = call.getWrMod(i);
            m.setWr_id(w.wrId);
            m.setSend_flags(DisniWorkRequests.flags(w));
            if (w.opcode != WrOpcode.SEND) {
                m.getRdmaMod().setRemote_addr(w.remoteAddr);
                m.getRdmaMod().setRkey(w.rkey);
            }
            for (int j = 0; j < w.numSge; j++) {
                SVCPostSend.SgeMod s = m.getSgeMod(j);
                Sge g = w.sgl[j];
                s.setAddr(g.addr);
                s.setLength(g.length);
                s.setLkey(g.lkey);
            }
        }
    }

    @Override
    public synchronized void postSend(SendWr chain) throws VerbsException {
        checkOpen();
        long shape = shapeOf(chain);
        try {
            SVCPostSend call = shape < 0 ? null : cached(shape);
            if (call != null) {
                patch(call, chain);
                call.execute();
                return;
            }
            List<IbvSendWR> wrs = DisniWorkRequests.toSend(chain);
            call = ops.postSend(qp, wrs);
            sendSerialisations++;
            if (shape < 0) {
                try {
                    call.execute();
                } finally {
                    call.free();
                }
                return;
            }
            store(shape, call);
            call.execute();
        } catch (VerbsException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw posting("ibv_post_send", e);
        }
    }

    private SVCPostSend cached(long shape) {
        for (int i = 0; i < sendCached; i++) {
            if (shapes[i] == shape) {
                return sendCalls[i];
            }
        }
        return null;
    }

    private void store(long shape, SVCPostSend call) {
        int at;
        if (sendCached < SEND_CACHE) {
            at = sendCached++;
        } else {
            at = evict;
            evict = (evict + 1) % SEND_CACHE;
            sendCalls[at].free();
        }
        shapes[at] = shape;
        sendCalls[at] = call;
    }

    @Override
    public synchronized void postRecv(RecvWr chain) throws VerbsException {
        checkOpen();
        try {
            for (RecvWr w = chain; w != null; w = w.next) {
                if (w.numSge < 0 || w.numSge > DisniVerbsProvider.MAX_SGE) {
                    throw new VerbsException(VerbsException.EINVAL, "a receive has " + w.numSge
                            + " SGEs; libdisni creates QPs with " + DisniVerbsProvider.MAX_SGE);
                }
                RecvEntry e = recvCalls.get(w.wrId);
                if (e == null || !e.matches(w)) {
                    if (e != null) {
                        e.call.free();
                    }
                    RecvWr one = single(w);
                    List<IbvRecvWR> l = DisniWorkRequests.toRecv(one);
                    e = new RecvEntry(w, ops.postRecv(qp, l));
                    recvSerialisations++;
                    recvCalls.put(w.wrId, e);
                }
                e.call.execute();
            }
        } catch (VerbsException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw posting("ibv_post_recv", e);
        }
    }

    /** {@code w} alone (its {@code next} cut), for the per-request cache. */
    private static RecvWr single(RecvWr w) {
        if (w.next == null) {
            return w;
        }
        RecvWr c = new RecvWr(Math.max(1, w.numSge));
        c.wrId = w.wrId;
        for (int i = 0; i < w.numSge; i++) {
            c.addSge(w.sgl[i].addr, w.sgl[i].length, w.sgl[i].lkey);
        }
        return c;
    }

    private void checkOpen() throws VerbsException {
        if (state == QpState.CLOSED) {
            throw new VerbsException(VerbsException.ENOTCONN, "disni: QP " + qpNum + " is destroyed");
        }
    }

    private VerbsException posting(String verb, Exception e) {
        String m = e.getMessage() == null ? e.toString() : DisniProbe.firstLine(e.getMessage());
        // libdisni reports ENOMEM from a full queue as the verb's failure message
        int errno = m.contains("ENOMEM") || m.contains("Cannot allocate memory") ? VerbsException.ENOMEM
                : VerbsException.EINVAL;
        VerbsException v = new VerbsException(errno, "disni: " + verb + " on QP " + qpNum + " failed: " + m);
        v.initCause(e);
        return v;
    }

    /** Serialisations so far (sends, receives): what the caches saved is posts minus these. */
    synchronized long[] serialisations() {
        return new long[] {sendSerialisations, recvSerialisations};
    }

    /** Frees the cached calls; the QP itself is destroyed with its connection. */
    synchronized void close() {
        state = QpState.CLOSED;
        for (int i = 0; i < sendCached; i++) {
            sendCalls[i].free();
            sendCalls[i] = null;
        }
        sendCached = 0;
        recvCalls.forEach(e -> e.call.free());
        recvCalls.clear();
    }

    @Override
    public String toString() {
        return "disni qp " + qpNum + " " + state;
    }
}
