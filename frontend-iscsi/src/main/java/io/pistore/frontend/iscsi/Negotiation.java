package io.pistore.frontend.iscsi;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The operational text negotiation of one session (RFC 7143 section 13) and what it agreed. The
 * target answers each key the initiator offers with the result of the key's rule (minimum, maximum,
 * AND, OR, first acceptable of a list), {@code Reject} for a value out of range,
 * {@code NotUnderstood} for an unknown key, {@code Irrelevant} for a full-feature key in a
 * discovery session. Error recovery level 0 only, one connection per session, one outstanding R2T.
 */
final class Negotiation {
    /** The data segment this target receives per PDU, declared to the initiator. */
    static final int TARGET_MAX_RECV_DATA = 262_144;
    /** The largest burst this target accepts or sends. */
    static final int TARGET_MAX_BURST = 16_776_192;
    /** The largest unsolicited first burst this target accepts. */
    static final int TARGET_FIRST_BURST = 262_144;

    private static final Set<String> FULL_FEATURE_ONLY = Set.of("MaxBurstLength", "FirstBurstLength",
            "InitialR2T", "ImmediateData", "MaxOutstandingR2T", "DataPDUInOrder", "DataSequenceInOrder",
            "DefaultTime2Wait", "DefaultTime2Retain", "ErrorRecoveryLevel", "MaxConnections");

    boolean headerDigest;
    boolean dataDigest;
    /** What the initiator receives per PDU: the most this target sends in one data segment. */
    int initiatorMaxRecvData = 8192;
    int maxBurst = 262_144;
    int firstBurst = 65_536;
    boolean immediateData = true;
    boolean initialR2T = true;
    boolean declaredOwnMaxRecv;

    /**
     * The answers to {@code offered} (operational keys only; the login handles names, session type
     * and authentication), the agreed values kept.
     */
    Map<String, String> answer(Map<String, String> offered, boolean discovery) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : offered.entrySet()) {
            String k = e.getKey();
            String v = e.getValue();
            if (discovery && FULL_FEATURE_ONLY.contains(k)) {
                out.put(k, "Irrelevant");
                continue;
            }
            String a = answerOne(k, v);
            if (a != null) {
                out.put(k, a);
            }
        }
        if (firstBurst > maxBurst) {
            firstBurst = maxBurst;
            if (out.containsKey("FirstBurstLength")) {
                out.put("FirstBurstLength", Integer.toString(firstBurst));
            }
        }
        if (!declaredOwnMaxRecv && !offered.isEmpty()) {
            out.put("MaxRecvDataSegmentLength", Integer.toString(TARGET_MAX_RECV_DATA));
            declaredOwnMaxRecv = true;
        }
        return out;
    }

    /** The answer to one key, or null for a declarative key that gets none. */
    private String answerOne(String k, String v) {
        switch (k) {
            case "HeaderDigest": {
                String d = digest(v);
                if (d != null) {
                    headerDigest = d.equals("CRC32C");
                }
                return d == null ? "Reject" : d;
            }
            case "DataDigest": {
                String d = digest(v);
                if (d != null) {
                    dataDigest = d.equals("CRC32C");
                }
                return d == null ? "Reject" : d;
            }
            case "MaxRecvDataSegmentLength": {
                long n = number(v, 512, 16_777_215);
                if (n < 0) {
                    return "Reject";
                }
                initiatorMaxRecvData = (int) n;
                return null;
            }
            case "MaxBurstLength": {
                long n = number(v, 512, 16_777_215);
                if (n < 0) {
                    return "Reject";
                }
                maxBurst = (int) Math.min(n, TARGET_MAX_BURST);
                return Integer.toString(maxBurst);
            }
            case "FirstBurstLength": {
                long n = number(v, 512, 16_777_215);
                if (n < 0) {
                    return "Reject";
                }
                firstBurst = (int) Math.min(n, TARGET_FIRST_BURST);
                return Integer.toString(firstBurst);
            }
            case "ImmediateData": {
                Boolean b = yesNo(v);
                if (b == null) {
                    return "Reject";
                }
                immediateData = b; // AND with this target's Yes
                return b ? "Yes" : "No";
            }
            case "InitialR2T": {
                Boolean b = yesNo(v);
                if (b == null) {
                    return "Reject";
                }
                initialR2T = b; // OR with this target's No
                return b ? "Yes" : "No";
            }
            case "DataPDUInOrder":
            case "DataSequenceInOrder":
                return yesNo(v) == null ? "Reject" : "Yes"; // OR with this target's Yes
            case "MaxOutstandingR2T":
                return number(v, 1, 65_535) < 0 ? "Reject" : "1";
            case "ErrorRecoveryLevel":
                return number(v, 0, 2) < 0 ? "Reject" : "0";
            case "MaxConnections":
                return number(v, 1, 65_535) < 0 ? "Reject" : "1";
            case "DefaultTime2Wait": {
                long n = number(v, 0, 3600);
                return n < 0 ? "Reject" : Long.toString(n); // maximum of the offer and this target's 0
            }
            case "DefaultTime2Retain":
                return number(v, 0, 3600) < 0 ? "Reject" : "0";
            case "IFMarker":
            case "OFMarker":
                return yesNo(v) == null ? "Reject" : "No";
            case "IFMarkInt":
            case "OFMarkInt":
                return "Irrelevant";
            case "InitiatorAlias":
                return null;
            default:
                return "NotUnderstood";
        }
    }

    /** The first of a comma list this target speaks (CRC32C or None), or null. */
    private static String digest(String v) {
        for (String s : v.split(",", -1)) {
            if (s.equals("CRC32C") || s.equals("None")) {
                return s;
            }
        }
        return null;
    }

    private static Boolean yesNo(String v) {
        return v.equals("Yes") ? Boolean.TRUE : v.equals("No") ? Boolean.FALSE : null;
    }

    /** A decimal or 0x-hex number within [min, max], or -1. */
    static long number(String v, long min, long max) {
        try {
            long n = v.startsWith("0x") || v.startsWith("0X") ? Long.parseLong(v.substring(2), 16) : Long.parseLong(v);
            return n < min || n > max ? -1 : n;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
