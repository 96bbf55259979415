package io.pistore.transport.rdma.verbs.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCRegMr;
import com.ibm.disni.verbs.SVCReqNotify;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * {@link DisniOps} over DiSNI 2.1. Loaded only after {@link DisniProbe} passed (libdisni loads, a
 * device exists, {@code sun.nio.ch} is exported), so nothing here can fail to link. Not covered by
 * the build's tests: there is no RDMA device on the build machine (docs/RDMA.md).
 */
final class RealDisniOps implements DisniOps {
    private record ChannelH(RdmaEventChannel ch) implements Channel {
    }

    /** Equal when the DiSNI id is the same object (DiSNI keeps one object per {@code rdma_cm_id}). */
    private record IdH(RdmaCmId id) implements Id {
    }

    private record CtxH(IbvContext ctx) implements Ctx {
    }

    private record PdH(IbvPd pd) implements Pd {
    }

    private static final class CqH implements Cq {
        final IbvCompChannel channel;
        final IbvCQ cq;
        SVCReqNotify notify;

        CqH(IbvCompChannel channel, IbvCQ cq) {
            this.channel = channel;
            this.cq = cq;
        }
    }

    private record QpH(IbvQP qp) implements Qp {
    }

    private static RdmaCmId id(Id id) {
        return ((IdH) id).id;
    }

    @Override
    public Channel createEventChannel() throws IOException {
        return new ChannelH(RdmaEventChannel.createEventChannel());
    }

    @Override
    public void destroyEventChannel(Channel ch) {
        try {
            ((ChannelH) ch).ch.destroyEventChannel();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public Id createId(Channel ch) throws IOException {
        return new IdH(((ChannelH) ch).ch.createId(RdmaCm.RDMA_PS_TCP));
    }

    @Override
    public void bindAddr(Id id, InetSocketAddress addr) throws IOException {
        id(id).bindAddr(addr);
    }

    @Override
    public void listen(Id id, int backlog) throws IOException {
        id(id).listen(backlog);
    }

    @Override
    public void resolveAddr(Id id, InetSocketAddress dst, int timeoutMs) throws IOException {
        id(id).resolveAddr(null, dst, timeoutMs);
    }

    @Override
    public void resolveRoute(Id id, int timeoutMs) throws IOException {
        id(id).resolveRoute(timeoutMs);
    }

    @Override
    public CmEvent getCmEvent(Channel ch, int timeoutMs) throws IOException {
        RdmaCmEvent ev = ((ChannelH) ch).ch.getCmEvent(timeoutMs);
        if (ev == null) {
            return null;
        }
        try {
            RdmaCmId conn = ev.getConnIdPriv();
            RdmaCmId listen = ev.getListenIdPriv();
            return new CmEvent(CmEventType.of(ev.getEvent()), conn == null ? null : new IdH(conn),
                    listen == null ? null : new IdH(listen));
        } finally {
            ev.ackEvent();
        }
    }

    @Override
    public void connect(Id id, int retryCount, int rnrRetryCount) throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count((byte) retryCount);
        p.setRnr_retry_count((byte) rnrRetryCount);
        id(id).connect(p);
    }

    @Override
    public void accept(Id id, int rnrRetryCount) throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRnr_retry_count((byte) rnrRetryCount);
        id(id).accept(p);
    }

    @Override
    public void disconnect(Id id) {
        try {
            id(id).disconnect();
        } catch (IOException ignored) {
            // already disconnected
        }
    }

    @Override
    public void destroyQp(Id id) {
        try {
            id(id).destroyQP();
        } catch (IOException ignored) {
            // no QP
        }
    }

    @Override
    public void destroyId(Id id) {
        try {
            id(id).destroyId();
        } catch (IOException ignored) {
            // already destroyed
        }
    }

    @Override
    public InetSocketAddress source(Id id) throws IOException {
        return (InetSocketAddress) id(id).getSource();
    }

    @Override
    public InetSocketAddress destination(Id id) throws IOException {
        return (InetSocketAddress) id(id).getDestination();
    }

    @Override
    public Ctx context(Id id) throws IOException {
        IbvContext c = id(id).getVerbs();
        return c == null ? null : new CtxH(c);
    }

    @Override
    public boolean sameDevice(Ctx a, Ctx b) throws IOException {
        return ((CtxH) a).ctx.getCmd_fd() == ((CtxH) b).ctx.getCmd_fd();
    }

    @Override
    public Pd allocPd(Ctx ctx) throws IOException {
        return new PdH(((CtxH) ctx).ctx.allocPd());
    }

    @Override
    public void deallocPd(Pd pd) {
        try {
            ((PdH) pd).pd.deallocPd();
        } catch (Exception ignored) {
            // closing
        }
    }

    @Override
    public Cq createCq(Ctx ctx, int entries) throws IOException {
        IbvContext c = ((CtxH) ctx).ctx;
        IbvCompChannel ch = c.createCompChannel();
        try {
            return new CqH(ch, c.createCQ(ch, entries, 0));
        } catch (IOException e) {
            ch.destroyCompChannel();
            throw e;
        }
    }

    @Override
    public void destroyCq(Cq cq) {
        CqH h = (CqH) cq;
        try {
            if (h.notify != null) {
                h.notify.free();
            }
            h.cq.destroyCQ();
            h.channel.destroyCompChannel();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public Qp createQp(Id id, Pd pd, Cq sendCq, Cq recvCq, int maxSendWr, int maxRecvWr, int maxInline)
            throws IOException {
        IbvQPInitAttr a = new IbvQPInitAttr();
        a.cap().setMax_send_wr(maxSendWr);
        a.cap().setMax_recv_wr(maxRecvWr);
        a.cap().setMax_send_sge(DisniVerbsProvider.MAX_SGE);
        a.cap().setMax_recv_sge(DisniVerbsProvider.MAX_SGE);
        a.cap().setMax_inline_data(maxInline);
        a.setQp_type(IbvQP.IBV_QPT_RC);
        a.setSend_cq(((CqH) sendCq).cq);
        a.setRecv_cq(((CqH) recvCq).cq);
        return new QpH(id(id).createQP(((PdH) pd).pd, a));
    }

    @Override
    public int qpNum(Qp qp) throws IOException {
        return ((QpH) qp).qp.getQp_num();
    }

    @Override
    public Mr regMr(Pd pd, ByteBuffer buffer, int ibvAccess) throws IOException {
        SVCRegMr call = ((PdH) pd).pd.regMr(buffer, ibvAccess).execute();
        IbvMr mr = call.getMr();
        call.free();
        return new Mr(mr, mr.getAddr(), mr.getLength(), mr.getLkey(), mr.getRkey());
    }

    @Override
    public void deregMr(Mr mr) {
        try {
            ((IbvMr) mr.handle()).deregMr().execute().free();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public SVCPostSend postSend(Qp qp, List<IbvSendWR> wrs) throws IOException {
        return ((QpH) qp).qp.postSend(wrs, null);
    }

    @Override
    public SVCPostRecv postRecv(Qp qp, List<IbvRecvWR> wrs) throws IOException {
        return ((QpH) qp).qp.postRecv(wrs, null);
    }

    @Override
    public SVCPollCq poll(Cq cq, IbvWC[] wcs, int n) throws IOException {
        return ((CqH) cq).cq.poll(wcs, n);
    }

    @Override
    public void requestNotify(Cq cq) throws IOException {
        CqH h = (CqH) cq;
        if (h.notify == null) {
            h.notify = h.cq.reqNotification(false);
        }
        h.notify.execute();
    }

    @Override
    public boolean awaitCqEvent(Cq cq, int timeoutMs) throws IOException {
        CqH h = (CqH) cq;
        boolean got = h.channel.getCqEvent(h.cq, timeoutMs);
        if (got) {
            h.cq.ackEvents(1);
        }
        return got;
    }
}
