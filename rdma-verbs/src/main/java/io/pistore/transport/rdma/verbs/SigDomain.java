package io.pistore.transport.rdma.verbs;

/**
 * {@code struct ib_sig_domain} with its {@code ib_t10_dif_domain}: how PI lies in one domain (memory
 * or wire). Mutable, so an MR's attributes are set per request without allocating.
 */
public final class SigDomain {
    public SigType sigType = SigType.NONE;
    /** {@code bg_type}. */
    public DifGuard bgType = DifGuard.CRC;
    /** {@code pi_interval}: data bytes per tuple. */
    public int piInterval;
    /** {@code bg}: guard seed. */
    public int bg;
    /** {@code app_tag}. */
    public int appTag;
    /** {@code ref_tag}: the initial reference tag (32 bits). */
    public long refTag;
    /** {@code ref_remap}: the reference tag increments per block. */
    public boolean refRemap;
    /** {@code app_escape}: app tag 0xFFFF skips the block's checks. */
    public boolean appEscape;
    /** {@code ref_escape}: with app_escape, the block is skipped only if its ref tag is also all-ones. */
    public boolean refEscape;
    /** {@code apptag_check_mask}. */
    public int apptagCheckMask;

    public boolean isDif() {
        return sigType == SigType.T10_DIF;
    }

    /** {@code memset(0)}: no signature. */
    public SigDomain clear() {
        sigType = SigType.NONE;
        bgType = DifGuard.CRC;
        piInterval = 0;
        bg = 0;
        appTag = 0;
        refTag = 0;
        refRemap = false;
        appEscape = false;
        refEscape = false;
        apptagCheckMask = 0;
        return this;
    }

    public SigDomain copyFrom(SigDomain o) {
        sigType = o.sigType;
        bgType = o.bgType;
        piInterval = o.piInterval;
        bg = o.bg;
        appTag = o.appTag;
        refTag = o.refTag;
        refRemap = o.refRemap;
        appEscape = o.appEscape;
        refEscape = o.refEscape;
        apptagCheckMask = o.apptagCheckMask;
        return this;
    }

    /** The reference tag block {@code i} carries (or is expected to carry) in this domain. */
    public long refTagOf(long i) {
        return (refRemap ? refTag + i : refTag) & 0xFFFFFFFFL;
    }

    @Override
    public String toString() {
        if (!isDif()) {
            return "none";
        }
        return "t10dif{" + bgType + " interval=" + piInterval + " ref=0x" + Long.toHexString(refTag)
                + (refRemap ? " remap" : "") + " app=0x" + Integer.toHexString(appTag) + "/0x"
                + Integer.toHexString(apptagCheckMask) + (appEscape ? " app_escape" : "")
                + (refEscape ? " ref_escape" : "") + "}";
    }
}
