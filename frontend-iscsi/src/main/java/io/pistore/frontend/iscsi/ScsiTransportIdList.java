package io.pistore.frontend.iscsi;

import java.util.ArrayList;
import java.util.List;

/**
 * The TransportIDs of a PERSISTENT RESERVE OUT REGISTER with SPEC_I_PT (SPC-4 6.16.3): after the
 * basic 24-byte parameter list, the TRANSPORTID PARAMETER DATA LENGTH (bytes 24-27) and that many
 * bytes of TransportIDs, one after the other, each as long as its header says. Only iSCSI
 * TransportIDs (protocol 5h, {@link ScsiTransportId}) are taken: every port of this target is an
 * iSCSI port, so no I_T nexus of another protocol can exist.
 */
final class ScsiTransportIdList {
    /** Where the TransportIDs start: the basic list and the TRANSPORTID PARAMETER DATA LENGTH. */
    static final int HEADER = 28;

    /** The TransportIDs, in list order, or (ids null) the answer that refuses the list. */
    record Parsed(List<ScsiTransportId> ids, ScsiResult refusal) {
    }

    private ScsiTransportIdList() {
    }

    /**
     * The TransportIDs of {@code param}, whose PARAMETER LIST LENGTH is {@code length}. A list
     * shorter than {@value #HEADER} bytes, a TRANSPORTID PARAMETER DATA LENGTH that does not end
     * where the parameter list ends, and a TransportID cut off by that end are PARAMETER LIST
     * LENGTH ERROR; another protocol identifier, or an iSCSI TransportID {@link ScsiTransportId#parse}
     * refuses, INVALID FIELD IN PARAMETER LIST. An empty list is valid.
     */
    static Parsed parse(byte[] param, long length) {
        if (length < HEADER || param.length < length || HEADER + Cdb.u32(param, 24) != length) {
            return refused(lengthError());
        }
        List<ScsiTransportId> ids = new ArrayList<>();
        int end = (int) length;
        for (int off = HEADER; off < end; ) {
            if (end - off < 4) {
                return refused(lengthError());
            }
            if ((param[off] & 0x0F) != ScsiTransportId.PROTOCOL_ISCSI) {
                return refused(invalidParameter());
            }
            int size = 4 + Cdb.u16(param, off + 2);
            if (size > end - off) {
                return refused(lengthError());
            }
            ScsiTransportId id = ScsiTransportId.parse(param, off, off + size);
            if (id == null) {
                return refused(invalidParameter());
            }
            ids.add(id);
            off += size;
        }
        return new Parsed(ids, null);
    }

    private static Parsed refused(ScsiResult r) {
        return new Parsed(null, r);
    }

    /** PARAMETER LIST LENGTH ERROR. */
    static ScsiResult lengthError() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00);
    }

    /** INVALID FIELD IN PARAMETER LIST. */
    static ScsiResult invalidParameter() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
    }
}
