package io.pistore.frontend.iscsi;

import io.pistore.security.access.AccessRules;
import io.pistore.security.access.ClientIdentity;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The login phase of one connection (RFC 7143 sections 6 and 11.12-11.13): the security stage with
 * authentication method None, the operational stage's negotiation, and the move to full feature
 * phase, for discovery and normal sessions. Keys that span several login PDUs (the C bit) are put
 * together before they are answered. A failure answers a login response with its status class and
 * detail and ends the connection.
 */
final class IscsiLogin {
    static final int STAGE_SECURITY = 0;
    static final int STAGE_OPERATIONAL = 1;
    static final int STAGE_FULL_FEATURE = 3;

    /** What a finished login agreed. */
    record Outcome(boolean discovery, String initiator, long isid, String targetName, ScsiLun lun, Negotiation params,
                   long expCmdSn, long statSn, ClientIdentity identity, boolean readOnly, String initiatorPort) {
        /** {@code initiatorPort}: the port of the session's I_T nexus, made once as every command names it. */
        Outcome(boolean discovery, String initiator, long isid, String targetName, ScsiLun lun, Negotiation params,
                long expCmdSn, long statSn, ClientIdentity identity, boolean readOnly) {
            this(discovery, initiator, isid, targetName, lun, params, expCmdSn, statSn, identity, readOnly,
                    portOf(initiator, isid));
        }

        /** The initiator port of an I_T nexus (SPC-4: name, ",i,0x" and the ISID in 12 hex digits). */
        static String portOf(String initiator, long isid) {
            return initiator + ",i,0x" + String.format("%012x", isid);
        }
    }

    private final IscsiServer server;
    private final PduChannel channel;
    private final Negotiation params = new Negotiation();
    private String initiator;
    private String targetName;
    private ScsiLun lun;
    private boolean discovery;
    private boolean sessionTypeKnown;
    private boolean firstResponse = true;
    private long statSn;
    /** CHAP of this login when the server asks for it, else null; {@code authenticated} once it passed. */
    private final IscsiChap chap;
    private boolean chapChosen;
    private boolean authenticated;
    /** The initiator's IP address, for the access rules. */
    private final String address;
    private AccessRules.Grant grant = AccessRules.Grant.NONE;
    private final java.util.function.Consumer<Outcome> entering;

    /**
     * A login on {@code channel} from {@code address}; {@code entering} learns the outcome of a
     * normal session before the initiator does (the last login response), and null when that
     * response could not be sent, so the server counts and ends the session from then on.
     */
    IscsiLogin(IscsiServer server, PduChannel channel, String address, java.util.function.Consumer<Outcome> entering) {
        this.server = server;
        this.channel = channel;
        this.address = address;
        this.entering = entering;
        this.chap = server.options().chap();
        this.authenticated = chap == null;
    }

    /** Runs the login from its first PDU; null when the initiator left before it ended. */
    Outcome run() throws IOException {
        Map<String, String> pending = new LinkedHashMap<>();
        byte[] partial = new byte[0];
        while (true) {
            Pdu p = channel.read();
            if (p == null) {
                return null;
            }
            if (p.opcode() != Pdu.LOGIN) {
                throw new IscsiProtocolException("PDU opcode 0x" + Integer.toHexString(p.opcode()) + " before login ended");
            }
            int csg = (p.flags() >>> 2) & 3;
            int nsg = p.flags() & 3;
            boolean transit = (p.flags() & 0x80) != 0;
            boolean more = (p.flags() & 0x40) != 0;
            if (p.u8(3) > 0) { // version-min above the only version, 0
                fail(p, 0x0205, "unsupported version " + p.u8(3));
                return null;
            }
            if (p.u16(14) != 0) {
                fail(p, 0x020A, "TSIH " + p.u16(14) + ": adding connections to a session is not supported");
                return null;
            }
            if (csg == 2 || transit && (nsg == 2 || nsg <= csg)) {
                fail(p, 0x0200, "bad login stages " + csg + " to " + nsg);
                return null;
            }
            if (transit && more) {
                fail(p, 0x0200, "login PDU with both T and C bits");
                return null;
            }
            byte[] joined = new byte[partial.length + p.data.length];
            System.arraycopy(partial, 0, joined, 0, partial.length);
            System.arraycopy(p.data, 0, joined, partial.length, p.data.length);
            if (joined.length > 65_536) {
                fail(p, 0x0200, "login text over 64 KiB");
                return null;
            }
            if (more) {
                partial = joined;
                respond(p, csg, 0, false, new byte[0]);
                continue;
            }
            partial = new byte[0];
            Map<String, String> keys;
            try {
                keys = TextKeys.parse(joined);
            } catch (IscsiProtocolException e) {
                fail(p, 0x0200, e.getMessage());
                return null;
            }
            pending.clear();
            String refused = names(p, keys, pending);
            if (refused != null) {
                return null;
            }
            if (chapChosen && !authenticated && !chapStep(p, keys, pending)) {
                return null;
            }
            if (!authenticated && transit && nsg != STAGE_SECURITY && !chapChosen) {
                fail(p, 0x0201, "the security stage ended without authentication");
                return null;
            }
            if (authenticated && !discovery && lun != null && !granted(p)) {
                return null;
            }
            if (!authenticated && transit) {
                transit = false; // CHAP not done yet: stay in the security stage
            }
            Map<String, String> operational = new LinkedHashMap<>(keys);
            for (String k : new String[] {"InitiatorName", "SessionType", "TargetName", "AuthMethod", "CHAP_A",
                "CHAP_N", "CHAP_R", "CHAP_I", "CHAP_C"}) {
                operational.remove(k);
            }
            pending.putAll(params.answer(operational, discovery));
            if (firstResponse) {
                pending.put("TargetPortalGroupTag", "1");
            }
            boolean full = transit && nsg == STAGE_FULL_FEATURE;
            Outcome done = !full ? null : new Outcome(discovery, initiator, p.u32(8) << 16 | p.u16(12), targetName, lun,
                    params, p.u32(24), statSn, identity(), grant == AccessRules.Grant.READ_ONLY);
            if (full && lun != null) {
                server.reinstate(done.initiatorPort(), lun.volume()); // an older session of this port ends first
                // the nexus is on the unit before the initiator knows it is in: no reset or unit attention missed
                lun.attentions().attach(done.initiatorPort());
                entering.accept(done);
            }
            try {
                respond(p, csg, transit ? nsg : 0, transit, TextKeys.format(pending));
            } catch (IOException | RuntimeException e) {
                if (full && lun != null) {
                    entering.accept(null);
                    lun.attentions().detach(done.initiatorPort());
                }
                throw e;
            }
            firstResponse = false;
            if (full) {
                return done;
            }
        }
    }

    /**
     * Takes the initiator and target names, session type and authentication method; answers a
     * failed login and returns its reason when they do not fit.
     */
    private String names(Pdu p, Map<String, String> keys, Map<String, String> answers) throws IOException {
        String name = keys.get("InitiatorName");
        if (name != null) {
            initiator = name;
        }
        if (initiator == null) {
            return fail(p, 0x0207, "no InitiatorName");
        }
        String type = keys.get("SessionType");
        if (type != null) {
            if (sessionTypeKnown && discovery != type.equals("Discovery")) {
                return fail(p, 0x0200, "SessionType changed during login");
            }
            if (!type.equals("Discovery") && !type.equals("Normal")) {
                return fail(p, 0x0209, "unknown SessionType " + TextKeys.shorten(type));
            }
            discovery = type.equals("Discovery");
            sessionTypeKnown = true;
        }
        sessionTypeKnown = true;
        String target = keys.get("TargetName");
        if (target != null && !discovery) {
            ScsiLun found = server.lun(target);
            if (found == null) {
                return fail(p, 0x0203, "no target " + TextKeys.shorten(target));
            }
            targetName = target;
            lun = found;
        }
        if (!discovery && lun == null) {
            return fail(p, 0x0207, "a normal session without TargetName");
        }
        String auth = keys.get("AuthMethod");
        if (auth != null) {
            boolean none = false;
            boolean chapOffered = false;
            for (String s : auth.split(",", -1)) {
                none |= s.equals("None");
                chapOffered |= s.equals("CHAP");
            }
            if (chap != null) {
                if (!chapOffered) {
                    return fail(p, 0x0201, "AuthMethod " + TextKeys.shorten(auth) + " offered, this target asks CHAP");
                }
                chapChosen = true;
                answers.put("AuthMethod", "CHAP");
            } else if (!none) {
                return fail(p, 0x0201, "AuthMethod " + TextKeys.shorten(auth) + " offered, this target speaks None");
            } else {
                answers.put("AuthMethod", "None");
            }
        }
        return null;
    }

    private ClientIdentity identity() {
        return InitiatorAccess.identity(initiator, chap == null ? null : chap.authenticatedName(), address);
    }

    /**
     * Whether the access rules let this initiator use the target it names (a failed login answered
     * 0202h, authorization failure, when they do not); keeps what they grant.
     */
    private boolean granted(Pdu p) throws IOException {
        ClientIdentity who = identity();
        grant = InitiatorAccess.grant(server.options().access, who, lun.volume());
        if (grant == AccessRules.Grant.NONE) {
            fail(p, 0x0202, "target " + TextKeys.shorten(targetName) + " is not granted to " + who);
            return false;
        }
        return true;
    }

    /** One CHAP exchange: the challenge after CHAP_A, the check after CHAP_R; false when the login failed. */
    private boolean chapStep(Pdu p, Map<String, String> keys, Map<String, String> answers) throws IOException {
        if (keys.containsKey("CHAP_A")) {
            Map<String, String> c = chap.challenge(keys.get("CHAP_A"));
            if (c == null) {
                fail(p, 0x0201, "CHAP_A " + TextKeys.shorten(keys.get("CHAP_A")) + " has no MD5 (5)");
                return false;
            }
            answers.putAll(c);
        } else if (keys.containsKey("CHAP_R")) {
            Map<String, String> r = chap.verify(keys);
            if (r == null) {
                fail(p, 0x0201, "CHAP authentication of " + TextKeys.shorten(String.valueOf(keys.get("CHAP_N")))
                        + " failed");
                return false;
            }
            answers.putAll(r);
            authenticated = true;
        }
        return true;
    }

    private void respond(Pdu req, int csg, int nsg, boolean transit, byte[] data) throws IOException {
        Pdu r = Pdu.target(Pdu.LOGIN_RESPONSE, (transit ? 0x80 : 0) | csg << 2 | (transit ? nsg : 0));
        r.set8(2, 0).set8(3, 0);
        System.arraycopy(req.bhs, 8, r.bhs, 8, 6); // ISID
        if (transit && nsg == STAGE_FULL_FEATURE) {
            r.set16(14, server.nextTsih());
        }
        r.set32(16, req.itt());
        long cmdSn = req.u32(24);
        r.set32(24, statSn++);
        r.set32(28, cmdSn);
        r.set32(32, cmdSn + IscsiTaskSet.WINDOW - 1);
        channel.write(r.data(data), true);
    }

    /** Answers a failed login with {@code status} (class and detail) and returns why. */
    private String fail(Pdu req, int status, String why) throws IOException {
        Pdu r = Pdu.target(Pdu.LOGIN_RESPONSE, 0);
        System.arraycopy(req.bhs, 8, r.bhs, 8, 6);
        r.set32(16, req.itt());
        r.set32(24, statSn++);
        long cmdSn = req.u32(24);
        r.set32(28, cmdSn);
        r.set32(32, cmdSn);
        r.set8(36, status >>> 8).set8(37, status & 0xff);
        // logged before the initiator sees the refusal
        server.log("iscsi: login of " + (initiator == null ? "an unnamed initiator" : TextKeys.shorten(initiator))
                + " refused: " + why);
        channel.write(r, true);
        return why;
    }
}
