package io.pistore.it.cli;

import io.pistore.app.cli.Main;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.tls.TestPki;
import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve}'s TLS options: bad key and certificate files stop it at start with one line; a
 * listener other machines can reach without TLS is named in a one-line warning; a certificate
 * makes NBD require TLS.
 */
class ServeTlsTest {
    @TempDir
    Path dir;

    record Result(int code, String out, String err) {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(code, out.toString(), err.toString().strip());
    }

    /** Runs serve in a thread until its output has {@code until}, then stops it; the output. */
    static Result serveUntil(String until, String... args) throws InterruptedException {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicInteger code = new AtomicInteger(Integer.MIN_VALUE);
        Thread serve = new Thread(() -> code.set(Main.run(new PrintWriter(out, true), new PrintWriter(err, true),
                args)), "serve-under-test");
        serve.start();
        try {
            Eventually.await("serve to say '" + until + "' or end",
                    () -> (out + "" + err).contains(until) || !serve.isAlive());
        } finally {
            serve.interrupt();
            serve.join(TimeUnit.SECONDS.toMillis(30));
        }
        return new Result(code.get(), out.toString(), err.toString().strip());
    }

    @Test
    void aKeyThatDoesNotMatchStopsServeWithOneLine() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB",
                "--tls-cert", pki.serverCert().toString(), "--tls-key", pki.clientKey().toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("pistore serve: private key " + pki.clientKey() + " does not match certificate "),
                r.err());
    }

    @Test
    void aMissingCertificateStopsServeWithOneLine() {
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB",
                "--tls-cert", dir.resolve("none.pem").toString(), "--tls-key", dir.resolve("none-key.pem").toString());
        assertEquals(2, r.code());
        assertEquals("pistore serve: certificate " + dir.resolve("none.pem") + " does not exist", r.err());
    }

    @Test
    void nbdTlsWithoutACertificateIsAUsageError() {
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--nbd-tls", "require");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--nbd-tls require needs --tls-cert and --tls-key"), r.err());
    }

    @Test
    void anAccessFileNeedsClientCertificates() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        java.nio.file.Files.writeString(dir.resolve("access"), "alice m rw\n");
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--nbd-access",
                dir.resolve("access").toString(), "--tls-cert", pki.serverCert().toString(), "--tls-key",
                pki.serverKey().toString());
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--nbd-access needs client certificates"), r.err());
        java.nio.file.Files.writeString(dir.resolve("access"), "alice m\n");
        r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--nbd-access",
                dir.resolve("access").toString(), "--tls-cert", pki.serverCert().toString(), "--tls-key",
                pki.serverKey().toString(), "--tls-ca", pki.ca().toString(), "--tls-verify-client");
        assertEquals(2, r.code());
        assertEquals("pistore serve: access file " + dir.resolve("access") + " line 1: expected CLIENT VOLUMES ro|rw,"
                + " not 'alice m'", r.err());
    }

    @Test
    void oneAccessFileForBothListenersIsCheckedAtStart() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        java.nio.file.Files.writeString(dir.resolve("access"), "alice m rw\n");
        String access = dir.resolve("access").toString();
        Result r = run("serve", "--listen", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--access", access);
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().endsWith("tcp.access needs tcp.tls=true with tcp.tlsVerifyClient=true or tcp.tlsPsk"), r.err());
        r = run("serve", "--listen", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--access", access,
                "--nbd-access", access);
        assertEquals(2, r.code());
        assertEquals("pistore serve: --access and --nbd-access name the NBD rules twice; give one", r.err());
        r = run("serve", "--transport", "rdma", "--listen", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--access",
                access);
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("pistore serve: --access: the rdma transport has no access rules"), r.err());
        r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--access", access);
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--access needs client certificates on NBD"), r.err());
    }

    @Test
    void aHostSeesOnlyItsVolumesAndBenchRefusesToWriteOneItMayOnlyRead() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        java.nio.file.Files.writeString(dir.resolve("access"), "alice rw rw\nalice ro ro\n");
        String[] serverTls = {"--transport-option", "tcp.tls=true", "--transport-option",
            "tcp.tlsCert=" + pki.serverCert(), "--transport-option", "tcp.tlsKey=" + pki.serverKey(),
            "--transport-option", "tcp.tlsCa=" + pki.ca(), "--transport-option", "tcp.tlsVerifyClient=true"};
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("serve", "--listen", "127.0.0.1:0",
                "--memory-volume", "rw:1MiB", "--memory-volume", "ro:1MiB", "--memory-volume", "hidden:1MiB",
                "--access", dir.resolve("access").toString()));
        args.addAll(java.util.List.of(serverTls));
        Thread serve = new Thread(() -> Main.run(new PrintWriter(out, true), new PrintWriter(err, true),
                args.toArray(String[]::new)), "serve-under-test");
        serve.start();
        try {
            java.util.regex.Pattern listening = java.util.regex.Pattern.compile("on tcp (127\\.0\\.0\\.1:\\d+)");
            Eventually.await("serve to listen or end", Duration.ofSeconds(60),
                    () -> listening.matcher(out.toString()).find() || !serve.isAlive());
            java.util.regex.Matcher m = listening.matcher(out.toString());
            assertTrue(m.find(), out + " / " + err);
            String target = m.group(1);
            String[] hostTls = {"--transport", "tcp", "--target", target, "--transport-option", "tcp.tls=true",
                "--transport-option", "tcp.tlsCert=" + pki.clientCert(), "--transport-option",
                "tcp.tlsKey=" + pki.clientKey(), "--transport-option", "tcp.tlsCa=" + pki.ca(),
                "--seconds", "1", "--ramp", "0", "--qd", "2", "--bs", "4096"};
            Result writeRo = run(concat(new String[] {"bench", "--volume", "ro", "--rw", "randwrite"}, hostTls));
            assertEquals(2, writeRo.code(), writeRo.out() + writeRo.err());
            assertTrue(writeRo.err().contains("volume ro is read-only to this host (the target's access rules): "
                    + "--rw randwrite writes; use --rw randread or read"), writeRo.err());
            Result hidden = run(concat(new String[] {"bench", "--volume", "hidden", "--rw", "randread"}, hostTls));
            assertEquals(2, hidden.code(), hidden.out() + hidden.err());
            assertTrue(hidden.err().contains("the target has no volume named 'hidden'"), hidden.err());
            Result readRo = run(concat(new String[] {"bench", "--volume", "ro", "--rw", "randread"}, hostTls));
            assertEquals(0, readRo.code(), readRo.out() + readRo.err());
            Result writeRw = run(concat(new String[] {"bench", "--volume", "rw", "--rw", "randwrite"}, hostTls));
            assertEquals(0, writeRw.code(), writeRw.out() + writeRw.err());
        } finally {
            serve.interrupt();
            serve.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertTrue(out.toString().contains("access=2 rule(s)") || out.toString().contains("tcp.access="),
                out.toString());
    }

    static String[] concat(String[] a, String[] b) {
        String[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    @Test
    void plaintextNbdOnEveryAddressIsWarnedAbout() throws Exception {
        Result r = serveUntil("warning", "serve", "--nbd", "0.0.0.0:0", "--memory-volume", "m:1MiB");
        assertEquals(0, r.code(), r.out() + " / " + r.err());
        assertTrue(r.err().matches("pistore serve: warning: NBD on every address port \\d+ accepts clients without TLS: "
                + "anyone who can reach it reads and writes every volume \\(see docs/SECURITY.md\\)"), r.err());
    }

    @Test
    void aCertificateMakesNbdRequireTlsAndSilencesTheWarning() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        Result r = serveUntil("/m ", "serve", "--nbd", "0.0.0.0:0", "--memory-volume", "m:1MiB",
                "--tls-cert", pki.serverCert().toString(), "--tls-key", pki.serverKey().toString());
        assertEquals(0, r.code(), r.out() + " / " + r.err());
        assertTrue(r.out().contains(", TLS require (certificate CN=localhost"), r.out());
        assertTrue(r.out().matches("(?s).*\\n  nbds://127\\.0\\.0\\.1:\\d+/m .*"), r.out());
        assertFalse(r.err().contains("warning"), r.err());
    }

    @Test
    void theTlsEngineIsNamedAtStartOnNbdAndTcp() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.pistore.security.tls.NativeTls.NETTY.available(),
                () -> "the openssl TLS engine is not available: "
                        + io.pistore.security.tls.NativeTls.NETTY.unavailabilityCause());
        TestPki pki = TestPki.create(dir, "alice");
        Result r = serveUntil("/m ", "serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB",
                "--tls-cert", pki.serverCert().toString(), "--tls-key", pki.serverKey().toString());
        assertTrue(r.out().contains(", engine=openssl (BoringSSL))"), r.out());
        r = serveUntil("/m ", "serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-engine", "jdk",
                "--tls-cert", pki.serverCert().toString(), "--tls-key", pki.serverKey().toString());
        assertTrue(r.out().contains(", engine=jdk)"), r.out());
        r = serveUntil("tls: ", "serve", "--listen", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-engine", "jdk",
                "--transport-option", "tcp.tls=true", "--transport-option", "tcp.tlsCert=" + pki.serverCert(),
                "--transport-option", "tcp.tlsKey=" + pki.serverKey());
        assertTrue(r.out().contains("\n  tls: TLSv1.3 engine=jdk\n"), r.out() + " / " + r.err());
    }

    @Test
    void preSharedKeysOnTcpAreNamedAtStartAndTakeNoEngine() throws Exception {
        Path keys = dir.resolve("tcp.psk");
        java.nio.file.Files.writeString(keys, "host1:00112233445566778899aabbccddeeff\n");
        java.nio.file.Files.setPosixFilePermissions(keys, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        // --tls-engine is for the certificates of other listeners: pre-shared keys run on Bouncy Castle
        Result r = serveUntil("tls: ", "serve", "--listen", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-engine",
                "jdk", "--transport-option", "tcp.tls=true", "--transport-option", "tcp.tlsPsk=" + keys);
        assertTrue(r.out().contains("\n  tls: TLSv1.3 pre-shared keys (Bouncy Castle)\n"), r.out() + " / " + r.err());
    }

    @Test
    void aBadOrDoubleTlsEngineIsOneLine() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-engine", "boring",
                "--tls-cert", pki.serverCert().toString(), "--tls-key", pki.serverKey().toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --tls-engine: TLS engine must be auto, openssl or jdk, not 'boring'", r.err());
        r = run("serve", "--listen", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-engine", "jdk",
                "--transport-option", "tcp.tls=true", "--transport-option", "tcp.tlsEngine=jdk",
                "--transport-option", "tcp.tlsCert=" + pki.serverCert(), "--transport-option",
                "tcp.tlsKey=" + pki.serverKey());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --tls-engine and tcp.tlsEngine name the tcp TLS engine twice; give one", r.err());
    }

    @Test
    void preSharedKeysMakeNbdRequireTls() throws Exception {
        Path keys = dir.resolve("keys.psk");
        java.nio.file.Files.writeString(keys, "alice:00112233445566778899aabbccddeeff\n");
        java.nio.file.Files.setPosixFilePermissions(keys, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")); // a key file open to others is refused
        Result r = serveUntil("/m ", "serve", "--nbd", "0.0.0.0:0", "--memory-volume", "m:1MiB",
                "--tls-psk", keys.toString());
        assertEquals(0, r.code(), r.out() + " / " + r.err());
        assertTrue(r.out().contains(", TLS require (pre-shared keys " + keys + ", 1 identity)"), r.out());
        assertTrue(r.out().matches("(?s).*\\n  nbds://127\\.0\\.0\\.1:\\d+/m .*"), r.out());
        assertFalse(r.err().contains("warning"), r.err());
    }

    @Test
    void aBadKeyFileStopsServeWithOneLine() throws Exception {
        Path keys = dir.resolve("keys.psk");
        java.nio.file.Files.writeString(keys, "alice:0011\nbob:xyz\n");
        java.nio.file.Files.setPosixFilePermissions(keys, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")); // a key file open to others is refused
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-psk", keys.toString());
        assertEquals(2, r.code());
        assertEquals("pistore serve: PSK key file " + keys + " line 2: the key of identity 'bob' is not hex "
                + "(an even number of 0-9, a-f)", r.err());
        r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-psk",
                dir.resolve("none.psk").toString());
        assertEquals(2, r.code());
        assertEquals("pistore serve: PSK key file " + dir.resolve("none.psk") + " does not exist", r.err());
    }

    @Test
    void preSharedKeysAndACertificateAreOneOrTheOther() throws Exception {
        TestPki pki = TestPki.create(dir, "alice");
        Path keys = dir.resolve("keys.psk");
        java.nio.file.Files.writeString(keys, "alice:0011\n");
        java.nio.file.Files.setPosixFilePermissions(keys, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")); // a key file open to others is refused
        Result r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-psk", keys.toString(),
                "--tls-cert", pki.serverCert().toString(), "--tls-key", pki.serverKey().toString());
        assertEquals(2, r.code());
        assertTrue(r.err().contains("give pre-shared keys or certificates, not both"), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void anAccessFileWorksWithPreSharedKeys() throws Exception {
        Path keys = dir.resolve("keys.psk");
        java.nio.file.Files.writeString(keys, "alice:0011\n");
        java.nio.file.Files.setPosixFilePermissions(keys, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")); // a key file open to others is refused
        java.nio.file.Files.writeString(dir.resolve("access"), "alice m rw\n");
        Result r = serveUntil("/m ", "serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-psk",
                keys.toString(), "--nbd-access", dir.resolve("access").toString());
        assertEquals(0, r.code(), r.out() + " / " + r.err());
        assertTrue(r.out().contains("1 access rule(s)"), r.out());
        r = run("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1MiB", "--tls-psk", keys.toString(),
                "--nbd-access", dir.resolve("access").toString(), "--nbd-tls", "on");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--nbd-access needs client certificates"), r.err());
    }
}
