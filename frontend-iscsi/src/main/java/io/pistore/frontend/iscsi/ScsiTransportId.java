package io.pistore.frontend.iscsi;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * An iSCSI TransportID (SPC-4 7.6.4.6) as a PERSISTENT RESERVE OUT parameter list carries it:
 * byte 0 the FORMAT CODE (bits 7:6) and PROTOCOL IDENTIFIER 5h (bits 3:0), bytes 2-3 the
 * ADDITIONAL LENGTH, then a null-terminated UTF-8 name padded with zeros. Format 00b names an
 * initiator device (the iSCSI name alone); format 01b an initiator port, the name followed by
 * {@code ",i,0x"} and the ISID in hexadecimal, which is how this target names the initiator side of
 * an I_T nexus ({@link IscsiLogin.Outcome#initiatorPort()}). The ISID comes back in the target's
 * spelling (12 lower-case digits), so a port compares equal to the nexus that logged in with it.
 */
record ScsiTransportId(String name, String isid) {
    static final int PROTOCOL_ISCSI = 5;
    /** The longest TransportID taken: a 223-byte iSCSI name (RFC 7143), ",i,0x", 12 digits, a null, padding, header. */
    static final int MAX_LENGTH = 248;

    /** Whether it names one initiator port (format 01b) rather than every port of an initiator (00b). */
    boolean port() {
        return isid != null;
    }

    /** The initiator port it names, as this target spells an I_T nexus (format 01b only). */
    String nexus() {
        return name + ",i,0x" + isid;
    }

    /** The initiator name of an I_T nexus string ({@code NAME,i,0xISID}). */
    static String initiatorOf(String nexus) {
        int comma = nexus.indexOf(",i,0x");
        return comma < 0 ? nexus : nexus.substring(0, comma);
    }

    /**
     * The TransportID in {@code b} from {@code off} to {@code end}, or null when it is not a valid
     * iSCSI TransportID: another protocol or format, an ADDITIONAL LENGTH beyond {@code end}, a name
     * that is empty, not null-terminated, not UTF-8 or holds a comma (format 00b), a format 01b name
     * without the separator or with an ISID that is not 1 to 12 hexadecimal digits.
     */
    static ScsiTransportId parse(byte[] b, int off, int end) {
        if (end - off < 4 || end - off > MAX_LENGTH) {
            return null;
        }
        int format = (b[off] & 0xC0) >>> 6;
        if ((b[off] & 0x0F) != PROTOCOL_ISCSI || format > 1) {
            return null;
        }
        int additional = Cdb.u16(b, off + 2);
        if (additional == 0 || off + 4 + additional > end) {
            return null;
        }
        int start = off + 4;
        int nul = start;
        while (nul < start + additional && b[nul] != 0) {
            nul++;
        }
        if (nul == start || nul == start + additional) {
            return null; // empty, or no terminating null inside the length
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, start, nul - start)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        if (format == 0) {
            return text.indexOf(',') >= 0 || text.isBlank() ? null : new ScsiTransportId(text, null);
        }
        int sep = text.toLowerCase(Locale.ROOT).lastIndexOf(",i,0x");
        if (sep <= 0) {
            return null;
        }
        String name = text.substring(0, sep);
        String hex = text.substring(sep + 5);
        if (name.indexOf(',') >= 0 || hex.isEmpty() || hex.length() > 12) {
            return null;
        }
        for (int i = 0; i < hex.length(); i++) {
            if ("0123456789abcdefABCDEF".indexOf(hex.charAt(i)) < 0) {
                return null;
            }
        }
        long isid = Long.parseLong(hex, 16);
        return new ScsiTransportId(name, String.format("%012x", isid));
    }

    /**
     * The TransportID of a registration: format 01b for an initiator port ({@code NAME,i,0xISID}),
     * 00b for an initiator name alone; padded to a multiple of 4 and at least 24 bytes.
     */
    static byte[] encode(String registrant) {
        byte[] name = registrant.getBytes(StandardCharsets.UTF_8);
        int length = Math.max(24, (4 + name.length + 1 + 3) & ~3);
        byte[] d = new byte[length];
        d[0] = (byte) ((registrant.contains(",i,0x") ? 0x40 : 0) | PROTOCOL_ISCSI);
        d[2] = (byte) ((length - 4) >>> 8);
        d[3] = (byte) (length - 4);
        System.arraycopy(name, 0, d, 4, name.length);
        return d;
    }
}
