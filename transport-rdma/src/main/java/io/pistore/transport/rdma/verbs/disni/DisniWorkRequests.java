package io.pistore.transport.rdma.verbs.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.Sge;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * Our work requests as DiSNI's ({@code ibv_send_wr} / {@code ibv_recv_wr} POJOs), and DiSNI's work
 * completions as ours. DiSNI has no REG_MR_INTEGRITY, LOCAL_INV or SEND_WITH_INV (its opcode
 * constants stop at the atomics), so those are refused with EOPNOTSUPP: the transport never posts
 * them on a device without {@code INTEGRITY_MR}. A production post path caches one SVCPostSend per
 * chain shape and patches wr_id, flags, remote address/key and SGEs through its *Mod views.
 */
public final class DisniWorkRequests {
    /** {@code enum ibv_wc_opcode}. */
    static final int IBV_WC_SEND = 0;
    static final int IBV_WC_RDMA_WRITE = 1;
    static final int IBV_WC_RDMA_READ = 2;
    static final int IBV_WC_RECV = 128;
    static final int IBV_WC_RECV_RDMA_WITH_IMM = 129;

    private DisniWorkRequests() {
    }

    public static List<IbvSendWR> toSend(SendWr chain) throws VerbsException {
        List<IbvSendWR> out = new ArrayList<>();
        for (SendWr w = chain; w != null; w = w.next) {
            IbvSendWR d = new IbvSendWR();
            d.setWr_id(w.wrId);
            switch (w.opcode) {
                case SEND: d.setOpcode(IbvSendWR.IBV_WR_SEND); break;
                case RDMA_WRITE: d.setOpcode(IbvSendWR.IBV_WR_RDMA_WRITE); break;
                case RDMA_READ: d.setOpcode(IbvSendWR.IBV_WR_RDMA_READ); break;
                default:
                    throw unsupported(w.opcode);
            }
            d.setSend_flags(flags(w));
            if (w.opcode != io.pistore.transport.rdma.verbs.WrOpcode.SEND) {
                d.getRdma().setRemote_addr(w.remoteAddr);
                d.getRdma().setRkey(w.rkey);
            }
            d.setSg_list(sges(w.sgl, w.numSge));
            d.setNum_sge(w.numSge);
            out.add(d);
        }
        return out;
    }

    /** Why DiSNI cannot post {@code op} (EOPNOTSUPP). */
    static VerbsException unsupported(io.pistore.transport.rdma.verbs.WrOpcode op) {
        return new VerbsException(VerbsException.EOPNOTSUPP, "DiSNI cannot post " + op
                + " (no integrity MR, fast registration or invalidation)");
    }

    /** {@code ibv_send_flags} of a request: SIGNALED and FENCE (never INLINE: the SGEs name registered memory). */
    static int flags(SendWr w) {
        int flags = 0;
        if (w.signaled) flags |= IbvSendWR.IBV_SEND_SIGNALED;
        if (w.fence) flags |= IbvSendWR.IBV_SEND_FENCE;
        return flags;
    }

    public static List<IbvRecvWR> toRecv(RecvWr chain) {
        List<IbvRecvWR> out = new ArrayList<>();
        for (RecvWr w = chain; w != null; w = w.next) {
            IbvRecvWR d = new IbvRecvWR();
            d.setWr_id(w.wrId);
            d.setSg_list(sges(w.sgl, w.numSge));
            d.setNum_sge(w.numSge);
            out.add(d);
        }
        return out;
    }

    private static LinkedList<IbvSge> sges(Sge[] sgl, int n) {
        LinkedList<IbvSge> l = new LinkedList<>();
        for (int i = 0; i < n; i++) {
            IbvSge s = new IbvSge();
            s.setAddr(sgl[i].addr);
            s.setLength(sgl[i].length);
            s.setLkey(sgl[i].lkey);
            l.add(s);
        }
        return l;
    }

    /** Fills {@code out} from DiSNI's copy of an {@code ibv_wc}. */
    static WorkCompletion fromWc(com.ibm.disni.verbs.IbvWC wc, WorkCompletion out) {
        return fromWc(wc.getWr_id(), wc.getStatus(), wc.getOpcode(), wc.getByte_len(), wc.getQp_num(),
                wc.getVendor_err(), out);
    }

    /** Fills {@code out} from a raw {@code ibv_wc}: status by C value, opcode by {@code ibv_wc_opcode}. */
    public static WorkCompletion fromWc(long wrId, int status, int opcode, int byteLen, int qpNum, int vendorErr,
                                        WorkCompletion out) {
        out.wrId = wrId;
        out.status = WcStatus.of(status);
        out.opcode = switch (opcode) {
            case IBV_WC_SEND -> WcOpcode.SEND;
            case IBV_WC_RDMA_WRITE -> WcOpcode.RDMA_WRITE;
            case IBV_WC_RDMA_READ -> WcOpcode.RDMA_READ;
            case IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM -> WcOpcode.RECV;
            // ibv_wc.opcode is undefined on a failed completion; callers go by wr_id
            default -> WcOpcode.SEND;
        };
        out.byteLen = byteLen;
        out.qpNum = qpNum;
        out.vendorErr = vendorErr;
        return out;
    }
}
