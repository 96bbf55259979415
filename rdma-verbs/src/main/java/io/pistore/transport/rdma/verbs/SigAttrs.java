package io.pistore.transport.rdma.verbs;

/**
 * {@code struct ib_sig_attrs}: the signature attributes an integrity MR holds ({@code mr->sig_attrs}).
 * {@link #checkMask} has one bit per PI byte: | GUARD 2B | APPTAG 2B | REFTAG 4B |.
 * {@link #metaLength} is an output: {@link IntegrityMr#map} records the mapped metadata length here,
 * as {@code ib_map_mr_sg_pi} does.
 */
public final class SigAttrs {
    public static final int CHECK_GUARD = 0xc0;
    public static final int CHECK_APPTAG = 0x30;
    public static final int CHECK_REFTAG = 0x0f;
    /** Bytes of the T10-DIF tuple a signature engine handles. */
    public static final int DIF_SIZE = 8;

    public int checkMask;
    public final SigDomain mem = new SigDomain();
    public final SigDomain wire = new SigDomain();
    public int metaLength;

    /** {@code memset(sig_attrs, 0)}, keeping {@link #metaLength} (it describes the mapping, not the request). */
    public SigAttrs clear() {
        checkMask = 0;
        mem.clear();
        wire.clear();
        return this;
    }

    public SigAttrs copyFrom(SigAttrs o) {
        checkMask = o.checkMask;
        mem.copyFrom(o.mem);
        wire.copyFrom(o.wire);
        metaLength = o.metaLength;
        return this;
    }

    public boolean checksGuard() {
        return (checkMask & CHECK_GUARD) != 0;
    }

    public boolean checksApp() {
        return (checkMask & CHECK_APPTAG) != 0;
    }

    public boolean checksRef() {
        return (checkMask & CHECK_REFTAG) != 0;
    }

    /** Bytes that cross the wire for {@code dataLength} bytes of data: data plus a tuple per interval when the wire carries T10-DIF. */
    public long wireLength(long dataLength) {
        return wire.isDif() ? dataLength + dataLength / wire.piInterval * DIF_SIZE : dataLength;
    }

    @Override
    public String toString() {
        return "sig_attrs{check=0x" + Integer.toHexString(checkMask) + " mem=" + mem + " wire=" + wire
                + " meta_length=" + metaLength + "}";
    }
}
