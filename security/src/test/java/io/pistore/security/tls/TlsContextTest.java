package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Date;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading certificates and keys: what works, and the one-line error of each way a file can be wrong. */
class TlsContextTest {
    @TempDir
    Path dir;

    TestPki pki;

    @BeforeEach
    void pki() throws Exception {
        pki = TestPki.create(dir.resolve("pki"), "alice");
    }

    @Test
    void loadsAServerAndAClientContext() {
        TlsContext s = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true);
        assertTrue(s.requiresClientCertificate());
        assertTrue(s.toString().contains("CN=localhost"), s.toString());
        // the native engine lists SSLv2Hello too, which offers nothing once TLS 1.3 is the only protocol
        assertEquals(java.util.List.of(TlsContext.PROTOCOL), java.util.Arrays.stream(
                s.serverEngine().getEnabledProtocols()).filter(p -> !p.equals("SSLv2Hello")).toList());
        assertTrue(s.serverEngine().getNeedClientAuth());
        TlsContext c = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey());
        assertFalse(c.clientEngine("localhost", 1).getUseClientMode() == false);
        assertThrows(IllegalStateException.class, c::serverEngine);
    }

    @Test
    void readsPkcs1RsaKeys() throws Exception {
        pki.openssl("genrsa", "-traditional", "-out", "rsa-key.pem", "2048");
        assertTrue(Files.readString(pki.dir.resolve("rsa-key.pem")).contains("BEGIN RSA PRIVATE KEY"));
        pki.openssl("req", "-x509", "-key", "rsa-key.pem", "-out", "rsa-cert.pem", "-days", "1", "-subj", "/CN=rsa");
        assertNotNull(TlsContext.server(pki.dir.resolve("rsa-cert.pem"), pki.dir.resolve("rsa-key.pem"), null, false));
    }

    @Test
    void aMissingFileIsNamed() {
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(dir.resolve("nope.pem"), pki.serverKey(), null, false));
        assertEquals("certificate " + dir.resolve("nope.pem") + " does not exist", e.getMessage());
    }

    @Test
    void anUnreadableFileIsNamed() throws Exception {
        Path key = dir.resolve("locked-key.pem");
        Files.copy(pki.serverKey(), key);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("---------"));
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isReadable(key), "skipped: running as root reads any file");
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.serverCert(), key, null, false));
        assertTrue(e.getMessage().contains("not readable"), e.getMessage());
    }

    @Test
    void aKeyOfAnotherCertificateIsAMismatch() {
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.serverCert(), pki.clientKey(), null, false));
        assertTrue(e.getMessage().startsWith("private key " + pki.clientKey() + " does not match certificate "
                + pki.serverCert()), e.getMessage());
    }

    @Test
    void swappedFilesAreTheWrongFormat() {
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.serverKey(), pki.serverCert(), null, false));
        assertEquals("certificate " + pki.serverKey() + " holds no certificate (found PRIVATE KEY)", e.getMessage());
    }

    @Test
    void derIsNotPem() throws Exception {
        pki.openssl("x509", "-in", "server-cert.pem", "-outform", "DER", "-out", "server-cert.der");
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.dir.resolve("server-cert.der"), pki.serverKey(), null, false));
        assertTrue(e.getMessage().endsWith("is not PEM (expected -----BEGIN CERTIFICATE-----)"), e.getMessage());
    }

    @Test
    void encryptedAndSec1KeysSayHowToConvert() throws Exception {
        pki.openssl("pkey", "-in", "server-key.pem", "-aes256", "-passout", "pass:x", "-out", "enc-key.pem");
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.serverCert(), pki.dir.resolve("enc-key.pem"), null, false));
        assertTrue(e.getMessage().contains("is encrypted"), e.getMessage());
        pki.openssl("ec", "-in", "server-key.pem", "-out", "sec1-key.pem");
        e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.serverCert(), pki.dir.resolve("sec1-key.pem"), null, false));
        assertTrue(e.getMessage().contains("openssl pkcs8 -topk8"), e.getMessage());
    }

    @Test
    void anExpiredCertificateSaysWhen() {
        Date later = new Date(System.currentTimeMillis() + TimeUnit.DAYS.toMillis(3));
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> PemCertificates.read(pki.serverCert(), "certificate", later));
        assertTrue(e.getMessage().matches("certificate .* CN=localhost expired on .*"), e.getMessage());
    }

    @Test
    void clientCertificatesNeedACa() {
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.server(pki.serverCert(), pki.serverKey(), null, true));
        assertTrue(e.getMessage().contains("CA bundle"), e.getMessage());
    }

    /** A native library that did not load, with a reason over several lines as a linker gives one. */
    private static final NativeTls MISSING = new NativeTls() {
        @Override
        public boolean available() {
            return false;
        }

        @Override
        public Throwable unavailabilityCause() {
            return new UnsatisfiedLinkError("no netty_tcnative in java.library.path\n\tand no bundled copy")
                    .initCause(new IllegalStateException("tried 2 names"));
        }

        @Override
        public String version() {
            return null;
        }
    };

    @Test
    void opensslAskedForButUnavailableIsOneLineNamingTheCause() {
        TlsFileException e = assertThrows(TlsFileException.class, () -> TlsContext.server(pki.serverCert(),
                pki.serverKey(), pki.ca(), true, TlsEngine.OPENSSL, MISSING));
        assertEquals("TLS engine openssl is not available here: UnsatisfiedLinkError: no netty_tcnative in "
                + "java.library.path and no bundled copy; caused by IllegalStateException: tried 2 names (the jdk "
                + "engine needs no native library)", e.getMessage());
        assertThrows(TlsFileException.class,
                () -> TlsContext.client(pki.ca(), null, null, TlsEngine.OPENSSL, MISSING));
    }

    @Test
    void autoFallsBackToTheJdkEngineWithoutTheLibrary() {
        TlsContext s = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, TlsEngine.AUTO, MISSING);
        assertEquals("jdk", s.engine());
        assertFalse(TlsContext.isNative(s.serverEngine()));
        assertTrue(s.toString().endsWith("engine=jdk"), s.toString());
    }

    @Test
    void autoIsOpensslWhereTheLibraryLoads() {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeTls.NETTY.available(),
                () -> "the openssl TLS engine is not available: " + NativeTls.NETTY.unavailabilityCause());
        TlsContext s = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true);
        assertTrue(s.engine().startsWith("openssl ("), s.engine());
        assertTrue(TlsContext.isNative(s.serverEngine()));
        assertTrue(s.serverEngine().getNeedClientAuth());
        TlsContext c = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey(), TlsEngine.OPENSSL);
        assertTrue(TlsContext.isNative(c.clientEngine("localhost", 1)));
        assertEquals("jdk", TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK).engine());
    }

    @Test
    void fileErrorsComeFirstOnEitherEngine() {
        for (TlsEngine engine : TlsEngine.values()) {
            TlsFileException e = assertThrows(TlsFileException.class,
                    () -> TlsContext.server(pki.serverCert(), pki.clientKey(), null, false, engine, MISSING));
            assertTrue(e.getMessage().contains("does not match"), e.getMessage());
        }
    }

    @Test
    void engineNamesParse() {
        assertEquals(TlsEngine.OPENSSL, TlsEngine.parse("OpenSSL"));
        assertEquals(TlsEngine.JDK, TlsEngine.parse("jdk"));
        assertEquals(TlsEngine.AUTO, TlsEngine.parse(" auto"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TlsEngine.parse("boring"));
        assertEquals("TLS engine must be auto, openssl or jdk, not 'boring'", e.getMessage());
    }

    @Test
    void aCertificateThatCannotBeParsedIsNamedByItsPlace() throws Exception {
        Path bad = dir.resolve("bad-cert.pem");
        Files.writeString(bad, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        TlsFileException e = assertThrows(TlsFileException.class, () -> PemCertificates.read(bad, "CA bundle", new Date()));
        assertTrue(e.getMessage().startsWith("CA bundle " + bad + ": certificate 1 cannot be parsed: "), e.getMessage());
    }

    @Test
    void aKeyFileWithoutPemIsSaidSo() throws Exception {
        Path key = dir.resolve("text-key.pem");
        Files.writeString(key, "not a key\n");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        TlsFileException e = assertThrows(TlsFileException.class, () -> TlsContext.server(pki.serverCert(), key, null, false));
        assertEquals("private key " + key + " is not PEM (expected -----BEGIN PRIVATE KEY-----)", e.getMessage());
    }

    @Test
    void aNativeServerAsksForClientCertificatesOnlyWhenTold() {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeTls.NETTY.available(),
                () -> "the openssl TLS engine is not available: " + NativeTls.NETTY.unavailabilityCause());
        TlsContext open = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.OPENSSL);
        assertFalse(open.serverEngine().getNeedClientAuth());
        assertFalse(open.requiresClientCertificate());
        assertThrows(IllegalStateException.class, () -> open.clientEngine("localhost", 1));
        TlsContext c = TlsContext.client(pki.ca(), null, null, TlsEngine.OPENSSL);
        assertEquals("HTTPS", c.clientEngine("localhost", 1).getSSLParameters().getEndpointIdentificationAlgorithm());
        assertThrows(IllegalStateException.class, c::serverEngine);
    }
}
