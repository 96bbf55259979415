package io.pistore.security.access;

import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Who a client is, as the access rules see it (docs/SECURITY.md): the names a rule's CLIENT field
 * is compared with. For a certificate: the common name (CN) of its subject and its DNS, email and
 * URI subjectAltNames; for a pre-shared key, or any other plain identity: that one name.
 * {@link #toString} is what logs print.
 */
public final class ClientIdentity {
    /** subjectAltName types (RFC 5280 GeneralName tags) a rule may match. */
    private static final int SAN_EMAIL = 1;
    private static final int SAN_DNS = 2;
    private static final int SAN_URI = 6;

    private final String display;
    private final String commonName;
    /** DNS names and other caseless names: compared without regard to ASCII case, as DNS does. */
    private final List<String> dnsNames;
    /** Email and URI names and a plain name: compared exactly. */
    private final List<String> exactNames;

    private ClientIdentity(String display, String commonName, List<String> dnsNames, List<String> exactNames) {
        this.display = display;
        this.commonName = commonName;
        this.dnsNames = List.copyOf(dnsNames);
        this.exactNames = List.copyOf(exactNames);
    }

    /** A plain identity, such as a PSK identity: a rule matches it when its CLIENT equals {@code name}. */
    public static ClientIdentity named(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("an identity needs a name");
        }
        return new ClientIdentity(name, null, List.of(), List.of(name));
    }

    /**
     * An identity known by several plain names, such as an iSCSI initiator's name and address:
     * {@code caseless} names are compared without regard to ASCII case (as iSCSI names are),
     * {@code exact} ones exactly; {@code display} is what logs print.
     */
    public static ClientIdentity of(String display, List<String> caseless, List<String> exact) {
        if (caseless.isEmpty() && exact.isEmpty()) {
            throw new IllegalArgumentException("an identity needs a name");
        }
        return new ClientIdentity(display, null, caseless, exact);
    }

    /** The identity of a certificate: its subject's CN and its DNS, email and URI subjectAltNames. */
    public static ClientIdentity of(X509Certificate cert) {
        String subject = cert.getSubjectX500Principal().getName();
        List<String> dns = new ArrayList<>();
        List<String> exact = new ArrayList<>();
        Collection<List<?>> sans;
        try {
            sans = cert.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            sans = null; // an unreadable extension adds no names; the CN still counts
        }
        if (sans != null) {
            for (List<?> san : sans) {
                int type = (Integer) san.get(0);
                if (!(san.get(1) instanceof String value)) {
                    continue;
                }
                if (type == SAN_DNS) {
                    dns.add(value);
                } else if (type == SAN_EMAIL || type == SAN_URI) {
                    exact.add(value);
                }
            }
        }
        String display = subject.isEmpty() && !(dns.isEmpty() && exact.isEmpty())
                ? "subjectAltName " + (dns.isEmpty() ? exact.get(0) : dns.get(0)) : subject;
        return new ClientIdentity(display, commonName(subject), dns, exact);
    }

    /**
     * Who the peer of a finished TLS session proved to be: its pre-shared key's identity, or its
     * certificate's ({@link #of(SSLSession)}); null when it proved nothing.
     */
    public static ClientIdentity of(io.pistore.security.tls.TlsStream s) {
        if (s.peerIdentityIsPsk()) {
            return s.peerIdentity() == null ? null : named(s.peerIdentity());
        }
        return s instanceof io.pistore.security.tls.TlsChannel t ? of(t.session()) : null;
    }

    /** The identity of a TLS session's peer certificate, or null when the peer showed none. */
    public static ClientIdentity of(SSLSession session) {
        Certificate[] chain;
        try {
            chain = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
        return chain.length > 0 && chain[0] instanceof X509Certificate x ? of(x) : null;
    }

    /** Whether a rule naming {@code client} means this identity. */
    public boolean matches(String client) {
        if (client.equals(commonName) || exactNames.contains(client)) {
            return true;
        }
        for (String d : dnsNames) {
            if (d.toLowerCase(Locale.ROOT).equals(client.toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    /** The subject's CN, or null (a plain identity has none). */
    public String commonName() {
        return commonName;
    }

    /** Every name a rule may match, for messages and tests. */
    public List<String> names() {
        List<String> all = new ArrayList<>();
        if (commonName != null) {
            all.add(commonName);
        }
        all.addAll(dnsNames);
        all.addAll(exactNames);
        return all;
    }

    /** The most specific CN of an RFC 2253 subject (the leftmost), or null. */
    static String commonName(String subject) {
        try {
            List<Rdn> rdns = new LdapName(subject).getRdns();
            for (int i = rdns.size() - 1; i >= 0; i--) {
                if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
                    return rdns.get(i).getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }

    @Override
    public String toString() {
        return display;
    }
}
