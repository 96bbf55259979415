package io.pistore.security.tls;

import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/** Reads the X.509 certificates of a PEM file and checks that each is valid now. */
final class PemCertificates {
    private PemCertificates() {
    }

    /** Every certificate of the file, in order; at least one, each valid at {@code now}. */
    static List<X509Certificate> read(Path file, String what, Date now) {
        List<PemBlock> blocks = PemBlock.read(file, what);
        List<X509Certificate> certs = new ArrayList<>();
        CertificateFactory cf;
        try {
            cf = CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException("this JDK has no X.509 support", e);
        }
        for (PemBlock b : blocks) {
            if (!b.type().equals("CERTIFICATE") && !b.type().equals("TRUSTED CERTIFICATE")) {
                continue;
            }
            X509Certificate c;
            try {
                c = (X509Certificate) cf.generateCertificate(new ByteArrayInputStream(b.der()));
            } catch (CertificateException e) {
                throw new TlsFileException(what + " " + file + ": certificate " + (certs.size() + 1)
                        + " cannot be parsed: " + e.getMessage());
            }
            try {
                c.checkValidity(now);
            } catch (CertificateExpiredException e) {
                throw new TlsFileException(what + " " + file + ": certificate " + c.getSubjectX500Principal().getName()
                        + " expired on " + c.getNotAfter().toInstant());
            } catch (CertificateNotYetValidException e) {
                throw new TlsFileException(what + " " + file + ": certificate " + c.getSubjectX500Principal().getName()
                        + " is not valid before " + c.getNotBefore().toInstant());
            }
            certs.add(c);
        }
        if (certs.isEmpty()) {
            throw new TlsFileException(what + " " + file + (blocks.isEmpty()
                    ? " is not PEM (expected -----BEGIN CERTIFICATE-----)"
                    : " holds no certificate (found " + blocks.get(0).type() + ")"));
        }
        return certs;
    }
}
