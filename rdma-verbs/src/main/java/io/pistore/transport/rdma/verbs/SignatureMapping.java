package io.pistore.transport.rdma.verbs;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;

/**
 * The one place that turns a block request and its volume's format into signature attributes, for
 * host and target alike (nvme-rdma's {@code nvme_rdma_set_sig_attrs} / {@code set_prot_checks} and
 * nvmet-rdma's {@code nvmet_rdma_set_sig_attrs}), and a signature error back into a completion.
 *
 * <p>Rules:
 * <ul>
 *   <li><b>PRACT</b> (insert/strip): the side without PI in memory has no memory domain; the wire
 *       carries T10-DIF. The host clears PRACT in the command it sends, as nvme-rdma does, so the
 *       target sees a pass request. A target still seeing PRACT (a host that did not insert) has no
 *       wire domain and inserts/strips into/from its memory domain.
 *   <li><b>pass</b>: both domains carry T10-DIF with the same parameters, so the engine copies the
 *       PI through and checks it on the way.
 *   <li>the wire carries the format's own guard (CRC-16 or IP checksum), so no conversion happens
 *       on the normal path: a guard converted by the sender would be recomputed over the data and
 *       hide a corruption from the target;
 *   <li>{@code ref_remap} iff the ref-tag check is asked, and also for a domain that generates PI
 *       (Types 1 and 2), so inserted PI carries incrementing reference tags as the NVMe spec says
 *       (Linux would write a constant one when PRCHK_REF is off); never for Type 3;
 *   <li>{@code app_escape} always; {@code ref_escape} for Type 3;
 *   <li>check mask: GUARD from the guard flag; REFTAG from the ref flag except for Type 3 (whose ref
 *       tag is never checked); APPTAG from the app flag <b>on the target only</b>. The host does not
 *       honour the app-tag check (as Linux's nvme-rdma host): the target checks it once, on the way
 *       in for writes and on the way out for reads.
 * </ul>
 * The wire length is computed from the wire domain, never assumed. A signature error's block is
 * {@code sig_err_offset / (interval + 8)} in every domain pairing ({@link #errorOffsetStride}).
 */
public final class SignatureMapping {
    private SignatureMapping() {
    }

    /**
     * Why a device's signature engine cannot carry {@code f}, or null when it can: it needs PI with
     * an 8-byte tuple that is the whole metadata, a CRC-16 or IP-checksum guard and a protection
     * interval the engine knows (512 or 4096).
     */
    public static String offloadRefusal(BlockFormat f, DeviceCaps caps) {
        if (!caps.has(Capability.INTEGRITY_MR)) {
            return "the device has no integrity MR";
        }
        if (!f.hasPi()) {
            return "the format carries no PI";
        }
        if (!f.guard().isEightByteTuple()) {
            return f.guard().tupleSize() + "-byte PI tuples (" + f.guard().cliName() + ") are not offloaded by NICs";
        }
        if (f.metadataSize() != SigAttrs.DIF_SIZE) {
            return f.metadataSize() + "-byte metadata is more than the 8-byte tuple the NIC handles";
        }
        if (!caps.sigIntervals().contains(f.dataSize())) {
            return "protection interval " + f.dataSize() + " is not supported by the signature engine";
        }
        if (!caps.sigGuards().contains(difGuard(f.guard()))) {
            return "guard " + f.guard().cliName() + " is not supported by the signature engine";
        }
        if (!caps.sigProtTypes().contains(f.type().number())) {
            return "PI type " + f.type().number() + " is not supported by the signature engine";
        }
        return null;
    }

    public static DifGuard difGuard(GuardType g) {
        if (g == GuardType.CRC16) return DifGuard.CRC;
        if (g == GuardType.IP_CHECKSUM) return DifGuard.CSUM;
        throw new IllegalArgumentException("guard " + g.cliName() + " has no T10-DIF signature type");
    }

    /** The reverse of {@link #difGuard}. */
    public static GuardType guardType(DifGuard g) {
        return g == DifGuard.CRC ? GuardType.CRC16 : GuardType.IP_CHECKSUM;
    }

    /**
     * Host attributes for a READ or WRITE. {@code hostMemoryHasPi}: the request's metadata list is
     * mapped (pass writes; reads that carry a metadata buffer); false for PRACT writes (insert) and
     * reads without metadata (strip). The wire always carries T10-DIF.
     */
    public static void setHostAttrs(SigAttrs a, BlockFormat f, boolean write, Protection p, boolean hostMemoryHasPi) {
        a.clear();
        boolean generating = write && !hostMemoryHasPi;
        setDomain(a.wire, f, p, generating);
        if (hostMemoryHasPi) {
            setDomain(a.mem, f, p, false);
        }
        a.checkMask = checkMask(f, p.checks(), false);
    }

    /**
     * Target attributes: the memory domain is the target's separate metadata buffer; the wire
     * carries T10-DIF unless the command still asks for PRACT (then the target inserts on writes and
     * strips on reads).
     */
    public static void setTargetAttrs(SigAttrs a, BlockFormat f, boolean write, Protection p) {
        a.clear();
        boolean wireHasPi = !p.pract();
        setDomain(a.mem, f, p, write && !wireHasPi);
        if (wireHasPi) {
            setDomain(a.wire, f, p, false);
        }
        a.checkMask = checkMask(f, p.checks(), true);
    }

    /** {@code nvme_rdma_set_sig_domain}. */
    static void setDomain(SigDomain d, BlockFormat f, Protection p, boolean generating) {
        d.clear();
        d.sigType = SigType.T10_DIF;
        d.bgType = difGuard(f.guard());
        d.piInterval = f.dataSize();
        d.bg = 0;
        d.refTag = p.initialRefTag() & 0xFFFFFFFFL;
        boolean type3 = f.type() == PiType.TYPE_3;
        d.refRemap = !type3 && (p.checks().ref() || generating);
        d.appTag = p.appTag();
        d.apptagCheckMask = p.appMask();
        d.appEscape = true;
        d.refEscape = type3;
    }

    /** {@code nvme_rdma_set_prot_checks} (host: no app check) and its target twin (app check honoured). */
    public static int checkMask(BlockFormat f, CheckFlags c, boolean honourApp) {
        int m = 0;
        if (c.guard()) m |= SigAttrs.CHECK_GUARD;
        if (c.ref() && f.type() != PiType.TYPE_3) m |= SigAttrs.CHECK_REFTAG;
        if (c.app() && honourApp) m |= SigAttrs.CHECK_APPTAG;
        return m;
    }

    /** Bytes on the wire for {@code blocks} blocks under {@code a}. */
    public static long wireLength(SigAttrs a, BlockFormat f, long blocks) {
        return a.wireLength(blocks * f.dataSize());
    }

    /**
     * The stride of {@code sig_err_offset}: interval + 8 for every domain pairing. mlx5 reports the
     * failing block's offset in the interleaved stream of data and tuples (the wire when it carries
     * PI, the strided memory view of data and metadata when only memory does), and the kernel's iSER
     * initiator and target both divide by sector size + 8 whatever the wire carries.
     */
    public static int errorOffsetStride(SigAttrs a) {
        SigDomain d = a.wire.isDif() ? a.wire : a.mem;
        return d.piInterval + SigAttrs.DIF_SIZE;
    }

    /** A latched signature error as a PI error; its block index is the error offset over interval + 8. */
    public static PiError toPiError(MrStatus st, SigAttrs a) {
        if (!st.failed) {
            return null;
        }
        PiErrorKind kind = st.errType == null ? PiErrorKind.GUARD : switch (st.errType) {
            case BAD_GUARD -> PiErrorKind.GUARD;
            case BAD_APPTAG -> PiErrorKind.APP_TAG;
            case BAD_REFTAG -> PiErrorKind.REF_TAG;
        };
        return new PiError(kind, st.sigErrOffset / errorOffsetStride(a), st.expected, st.actual);
    }

    /**
     * The completion of a request at {@code lba} whose MR reported {@code st} (null when clean).
     * When {@code ib_check_mr_status} itself failed, nvme-rdma answers NVME_SC_INVALID_PI; the SPI
     * has no such status (adding one would change the wire), so it is INVALID_FIELD with a message
     * that says so.
     */
    public static Completion toCompletion(MrStatus st, SigAttrs a, long lba) {
        if (st.errno != 0) {
            return Completion.failure(Status.INVALID_FIELD, "invalid protection information: the integrity MR's "
                    + "signature status could not be read (ib_check_mr_status errno " + st.errno + ")");
        }
        PiError e = toPiError(st, a);
        return e == null ? null : Completion.piError(lba, e);
    }

    /** A format as the signature engine's domains describe it (used by tests to cross-check with the integrity library). */
    public static BlockFormat formatOf(SigDomain d, PiType type) {
        return BlockFormat.of(d.piInterval, SigAttrs.DIF_SIZE,
                guardType(d.bgType), type, PiLocation.FIRST);
    }
}
