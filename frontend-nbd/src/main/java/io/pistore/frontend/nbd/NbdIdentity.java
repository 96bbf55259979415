package io.pistore.frontend.nbd;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/** Who a TLS client is: the subject of the certificate it showed, or nobody. */
final class NbdIdentity {
    private NbdIdentity() {
    }

    /** The peer certificate's subject (RFC 2253), or null when the client showed none. */
    static String of(SSLSession s) {
        try {
            return s.getPeerPrincipal().getName();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }
}
