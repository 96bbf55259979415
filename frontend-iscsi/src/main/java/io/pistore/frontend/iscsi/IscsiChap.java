package io.pistore.frontend.iscsi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;

/**
 * CHAP authentication of the login's security stage (RFC 7143 section 12.1.3, RFC 1994) with MD5,
 * the one algorithm every initiator offers: the target challenges the initiator and checks its
 * answer against the secret of the CHAP name it gives ({@link IscsiChapSecrets}); with a target secret too (mutual CHAP) it answers the
 * initiator's challenge. The digest is the JDK's MD5; the challenge comes from {@link SecureRandom}.
 */
final class IscsiChap {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int CHALLENGE_BYTES = 16;

    private final IscsiChapSecrets secrets;
    private int id;
    private byte[] challenge;
    /** The CHAP name the initiator proved, once it has. */
    private String authenticated;

    IscsiChap(IscsiChapSecrets secrets) {
        this.secrets = secrets;
    }

    /** The CHAP name the initiator proved it holds the secret of, or null before it did. */
    String authenticatedName() {
        return authenticated;
    }

    /** The target's CHAP_A, CHAP_I and CHAP_C answer to the initiator's CHAP_A list, or null when it has no MD5 (5). */
    Map<String, String> challenge(String algorithms) {
        boolean md5 = false;
        for (String a : algorithms.split(",", -1)) {
            md5 |= a.equals("5");
        }
        if (!md5) {
            return null;
        }
        id = RANDOM.nextInt(256);
        challenge = new byte[CHALLENGE_BYTES];
        RANDOM.nextBytes(challenge);
        return Map.of("CHAP_A", "5", "CHAP_I", Integer.toString(id), "CHAP_C", "0x" + HexFormat.of().formatHex(challenge));
    }

    /**
     * Checks the initiator's CHAP_N and CHAP_R; for mutual CHAP answers its CHAP_I and CHAP_C with
     * this target's CHAP_N and CHAP_R. Returns the answer keys, or null when the initiator failed.
     */
    Map<String, String> verify(Map<String, String> keys) {
        String name = keys.get("CHAP_N");
        byte[] response = bytes(keys.get("CHAP_R"));
        String secret = name == null ? null : secrets.initiatorSecret(name);
        if (challenge == null || secret == null || response == null) {
            return null;
        }
        byte[] ours = challenge;
        challenge = null; // one answer per challenge
        if (!MessageDigest.isEqual(response, md5(id, secret.getBytes(StandardCharsets.UTF_8), ours))) {
            return null;
        }
        String theirId = keys.get("CHAP_I");
        byte[] theirChallenge = bytes(keys.get("CHAP_C"));
        if (theirId == null && theirChallenge == null) {
            authenticated = name;
            return Map.of(); // the initiator does not ask the target to prove itself: its choice
        }
        long i = Negotiation.number(theirId == null ? "" : theirId, 0, 255);
        String targetSecret = secrets.targetSecret();
        if (targetSecret == null || i < 0 || theirChallenge == null || theirChallenge.length < CHALLENGE_BYTES
                || java.util.Arrays.equals(theirChallenge, ours)) { // a reflected challenge proves nothing
            return null;
        }
        authenticated = name;
        return Map.of("CHAP_N", secrets.targetName(), "CHAP_R", "0x" + HexFormat.of().formatHex(md5((int) i,
                targetSecret.getBytes(StandardCharsets.UTF_8), theirChallenge)));
    }

    private static byte[] md5(int id, byte[] secret, byte[] challenge) {
        try {
            MessageDigest d = MessageDigest.getInstance("MD5");
            d.update((byte) id);
            d.update(secret);
            d.update(challenge);
            return d.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no MD5", e);
        }
    }

    /** A 0x-hex or 0b-base64 CHAP value, or null. */
    private static byte[] bytes(String v) {
        if (v == null) {
            return null;
        }
        try {
            if (v.startsWith("0x") || v.startsWith("0X")) {
                return HexFormat.of().parseHex(v.substring(2));
            }
            if (v.startsWith("0b") || v.startsWith("0B")) {
                return java.util.Base64.getDecoder().decode(v.substring(2));
            }
        } catch (IllegalArgumentException e) {
            return null;
        }
        return null;
    }
}
