package io.pistore.it.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.security.tls.TestPki;
import io.pistore.security.tls.TlsContext;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real NBD clients over TLS (NBD_OPT_STARTTLS, X.509): libnbd's nbdcopy and nbdinfo with
 * {@code nbds://} URIs and {@code tls-certificates=DIR}, and qemu-img with a
 * {@code tls-creds-x509} object, against a server that requires TLS and client certificates
 * (certificates made with openssl at test time, in the file names both clients look for). A
 * plaintext client of that server gets no export. A test whose tool is missing is skipped and says
 * which package has it ({@code .ci/run} installs them).
 */
@Timeout(180)
class NbdTlsInteropTest extends NbdTlsInteropKit {
    TestPki pki;

    @Override
    NbdServer.Options tlsOptions() throws Exception {
        pki = TestPki.create(dir.resolve("pki"), "alice");
        TlsContext tls = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true);
        return new NbdServer.Options().tls(NbdTls.REQUIRE, tls);
    }

    String tlsUri(String export) {
        return "nbds://localhost:" + port() + "/" + export + "?tls-certificates=" + pki.dir;
    }

    @Test
    void nbdcopyBothWaysOverTlsIsByteIdentical() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path image = randomImage("in.raw", 1);
        ok(120, "nbdcopy", image.toString(), tlsUri("img"));
        Path back = dir.resolve("back.raw");
        ok(120, "nbdcopy", tlsUri("img"), back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        assertTrue(logs(l -> l.contains("TLS TLSv1.3") && l.contains("client CN=alice")), log.toString());
    }

    @Test
    void nbdinfoListsAndDescribesOverTls() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        ToolRun info = ok(60, "nbdinfo", tlsUri("img"));
        assertTrue(info.output().contains("export-size: " + IMAGE_BYTES), info.output());
        assertTrue(info.output().contains("uri: nbds://"), info.output());
        ToolRun list = ok(60, "nbdinfo", "--list", tlsUri(""));
        assertTrue(list.output().contains("img"), list.output());
    }

    @Test
    void aPlaintextClientOfARequireServerGetsNoExportAndWritesNothing() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path image = randomImage("in.raw", 2);
        ToolRun r = run(60, "nbdcopy", image.toString(), "nbd://localhost:" + port() + "/img");
        assertNotEquals(0, r.code(), r.output());
        ToolRun i = run(60, "nbdinfo", "nbd://localhost:" + port() + "/img");
        assertNotEquals(0, i.code(), i.output());
        Path back = dir.resolve("back.raw");
        ok(120, "nbdcopy", tlsUri("img"), back.toString());
        assertArrayEquals(new byte[(int) IMAGE_BYTES], Files.readAllBytes(back), "nothing was written");
        assertTrue(logs(l -> l.contains("TLS required")), log.toString());
    }

    @Test
    void qemuImgConvertsIntoAndOutOfAVolumeWithX509Credentials() throws Exception {
        assumeTool("qemu-img", "qemu-utils");
        Path image = randomImage("in.raw", 3);
        String creds = "tls-creds-x509,id=tls0,dir=" + pki.dir + ",endpoint=client";
        String target = "driver=nbd,host=localhost,port=" + port() + ",export=img,tls-creds=tls0";
        ok(120, "qemu-img", "convert", "-n", "--object", creds, "-f", "raw", image.toString(),
                "--target-image-opts", target);
        Path back = dir.resolve("back.raw");
        ok(120, "qemu-img", "convert", "--object", creds, "--image-opts", target, "-O", "raw", back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        ToolRun info = ok(60, "qemu-img", "info", "--object", creds, "--image-opts", target);
        assertTrue(info.output().contains(IMAGE_BYTES + " bytes"), info.output());
    }

    @Test
    void qemuImgWithoutCredentialsIsRefused() throws Exception {
        assumeTool("qemu-img", "qemu-utils");
        ToolRun r = run(60, "qemu-img", "info", "-f", "raw", "nbd://localhost:" + port() + "/img");
        assertNotEquals(0, r.code(), r.output());
    }
}
