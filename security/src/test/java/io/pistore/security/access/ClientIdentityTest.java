package io.pistore.security.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.access.AccessRules.Grant;
import io.pistore.security.tls.TestPki;
import java.io.InputStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Plain identities (a PSK's, an initiator's names) and the access file read from disk. */
class ClientIdentityTest {
    @TempDir
    Path dir;

    @Test
    void aPlainNameMatchesExactlyAndHasNoCommonName() {
        ClientIdentity id = ClientIdentity.named("backup");
        assertTrue(id.matches("backup"));
        assertFalse(id.matches("Backup"));
        assertNull(id.commonName());
        assertEquals(List.of("backup"), id.names());
        assertEquals("backup", id.toString());
        assertEquals("an identity needs a name", assertThrows(IllegalArgumentException.class,
                () -> ClientIdentity.named("")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> ClientIdentity.named(null));
    }

    @Test
    void severalNamesCompareCaselessOrExactlyAsGiven() {
        ClientIdentity id = ClientIdentity.of("iqn.2026-01.org.example:host7 at 10.0.0.7",
                List.of("iqn.2026-01.org.example:host7"), List.of("10.0.0.7"));
        assertTrue(id.matches("IQN.2026-01.ORG.EXAMPLE:HOST7"), "caseless");
        assertTrue(id.matches("10.0.0.7"));
        assertFalse(id.matches("10.0.0.70"));
        assertNull(id.commonName());
        assertEquals(List.of("iqn.2026-01.org.example:host7", "10.0.0.7"), id.names());
        assertEquals("iqn.2026-01.org.example:host7 at 10.0.0.7", id.toString());
        assertTrue(ClientIdentity.of("only exact", List.of(), List.of("x")).matches("x"));
        assertTrue(ClientIdentity.of("only caseless", List.of("Y"), List.of()).matches("y"));
        assertEquals("an identity needs a name", assertThrows(IllegalArgumentException.class,
                () -> ClientIdentity.of("none", List.of(), List.of())).getMessage());
    }

    @Test
    void theCommonNameIsTheMostSpecificOne() {
        assertEquals("leaf", ClientIdentity.commonName("CN=leaf,OU=ops,CN=outer,O=pistore"));
        assertNull(ClientIdentity.commonName("O=pistore"));
        assertNull(ClientIdentity.commonName("not a name"));
    }

    @Test
    void anAccessFileIsReadFromDisk() throws Exception {
        Path f = dir.resolve("access");
        Files.writeString(f, "# who may\nalice disk1 rw\n* disk2 ro\n");
        AccessRules a = AccessRules.read(f);
        assertEquals(2, a.size());
        assertEquals(Grant.READ_WRITE, a.grant(ClientIdentity.named("alice"), "disk1"));
        assertEquals(Grant.READ_ONLY, a.grant(ClientIdentity.named("bob"), "disk2"));
        assertEquals(Grant.NONE, a.grant(ClientIdentity.named("bob"), "disk1"));
    }

    @Test
    void aCertificateWithoutASubjectIsShownByItsFirstAltName() throws Exception {
        TestPki pki = TestPki.create(dir.resolve("pki"), "alice");
        pki.leaf("dns", "/", "subjectAltName=critical,DNS:nosubject.example,email:ops@example.org\n");
        pki.leaf("mail", "/", "subjectAltName=critical,email:ops@example.org\n");
        ClientIdentity dns = ClientIdentity.of(load(pki.dir.resolve("dns-cert.pem")));
        assertEquals("subjectAltName nosubject.example", dns.toString(), "a DNS name first");
        assertNull(dns.commonName());
        assertEquals(List.of("nosubject.example", "ops@example.org"), dns.names());
        ClientIdentity mail = ClientIdentity.of(load(pki.dir.resolve("mail-cert.pem")));
        assertEquals("subjectAltName ops@example.org", mail.toString());
        assertTrue(mail.matches("ops@example.org"));
        ClientIdentity named = ClientIdentity.of(load(pki.serverCert()));
        assertEquals("CN=localhost", named.toString(), "a subject, where there is one, before the alt names");
        assertEquals(List.of("localhost", "localhost"), named.names());
    }

    private static X509Certificate load(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
