package io.pistore.frontend.nbd;

import io.pistore.runtime.tls.TlsStream;
import javax.naming.ldap.Rdn;

/**
 * Who a TLS client is, as the access rules read it: the subject of the certificate it showed, or
 * for a pre-shared key a subject whose CN is the key's identity, so that one CLIENT column serves
 * both; null when the client proved nothing.
 */
final class NbdIdentity {
    private NbdIdentity() {
    }

    /** The peer's subject (RFC 2253), or null. */
    static String of(TlsStream s) {
        String who = s.peerIdentity();
        if (who == null || !s.peerIdentityIsPsk()) {
            return who;
        }
        // escaped, so an identity with commas or equals signs stays one CN value
        return "CN=" + Rdn.escapeValue(who);
    }
}
