package io.pistore.security.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.access.AccessRules.Grant;
import io.pistore.security.tls.TestPki;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccessRulesTest {
    @TempDir
    Path dir;

    @Test
    void theFirstRuleThatMatchesClientAndVolumeDecides() {
        AccessRules a = AccessRules.parse(List.of("# CLIENT VOLUMES ACCESS", "alice a,b rw", "alice * ro  # the rest",
                "* shared ro", "", "bob shared rw"), "t");
        assertEquals(4, a.size());
        ClientIdentity alice = ClientIdentity.named("alice");
        ClientIdentity bob = ClientIdentity.named("bob");
        assertEquals(Grant.READ_WRITE, a.grant(alice, "b"));
        assertEquals(Grant.READ_ONLY, a.grant(alice, "c"));
        assertEquals(Grant.READ_ONLY, a.grant(bob, "shared"), "'* shared ro' comes before 'bob shared rw'");
        assertEquals(Grant.NONE, a.grant(bob, "a"));
        assertEquals(Grant.NONE, a.grant(null, "shared"), "no identity: nothing, not even '*'");
        assertEquals(Grant.NONE, a.grant(ClientIdentity.named("Alice"), "a"), "a plain name matches exactly");
    }

    @Test
    void aLineItCannotUseIsOneLineNamingFileAndLine() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AccessRules.parse(List.of("# x", "alice a"), "f"));
        assertEquals("access file f line 2: expected CLIENT VOLUMES ro|rw, not 'alice a'", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AccessRules.parse(List.of("alice a rwx"), "f"));
        assertTrue(e.getMessage().startsWith("access file f line 1:"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AccessRules.parse(List.of("alice a,,b rw"), "f"));
        assertEquals("access file f line 1: an empty volume name in 'a,,b'", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AccessRules.read(dir.resolve("absent")));
        assertTrue(e.getMessage().startsWith("access file " + dir.resolve("absent") + " is not readable: "),
                e.getMessage());
        assertEquals(1, AccessRules.parse(List.of("alice a,a rw"), "f").size(), "a repeated volume is harmless");
    }

    @Test
    void aCertificateIsKnownByItsCommonNameAndItsDnsEmailAndUriSubjectAltNames() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        pki.leaf("san", "/O=pistore/CN=host7",
                "subjectAltName=DNS:Host7.Example,email:ops@example.org,URI:spiffe://example.org/host7,IP:10.0.0.7\n"
                        + "extendedKeyUsage=clientAuth\n");
        ClientIdentity id = ClientIdentity.of(load(pki.dir.resolve("san-cert.pem")));
        assertEquals("host7", id.commonName());
        assertEquals("CN=host7,O=pistore", id.toString());
        assertEquals(List.of("host7", "Host7.Example", "ops@example.org", "spiffe://example.org/host7"), id.names());
        assertTrue(id.matches("host7"));
        assertTrue(id.matches("host7.example"), "DNS names compare without regard to case");
        assertTrue(id.matches("ops@example.org"));
        assertTrue(id.matches("spiffe://example.org/host7"));
        assertTrue(!id.matches("OPS@example.org"), "email names compare exactly");
        assertTrue(!id.matches("10.0.0.7"), "IP addresses are not identities");
        assertTrue(!id.matches("pistore"), "only the CN of the subject counts");
        AccessRules a = AccessRules.parse(List.of("spiffe://example.org/host7 disk ro", "alice * rw"), "t");
        assertEquals(Grant.READ_ONLY, a.grant(id, "disk"));
        assertEquals(Grant.NONE, a.grant(id, "other"));
        assertEquals(Grant.READ_WRITE, a.grant(ClientIdentity.of(load(pki.clientCert())), "other"));
    }

    private static X509Certificate load(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
