package io.pistore.it.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.integrity.BlockFormat;
import io.pistore.runtime.tls.TestPki;
import io.pistore.runtime.tls.TlsContext;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real NBD clients over TLS (NBD_OPT_STARTTLS, X.509): libnbd's nbdcopy and nbdinfo with
 * {@code nbds://} URIs and {@code tls-certificates=DIR}, and qemu-img with a
 * {@code tls-creds-x509} object, against a server that requires TLS and client certificates
 * (certificates made with openssl at test time, in the file names both clients look for). A
 * plaintext client of that server gets no export. A test whose tool is missing is skipped and says
 * which package has it ({@code .ci/run} installs them).
 */
@Timeout(180)
class NbdTlsInteropTest {
    private static final long IMAGE_BYTES = 4L << 20;

    @TempDir
    Path dir;

    TestPki pki;
    VolumeStore store;
    BlockTransport transport;
    TargetListener listener;
    HostConnection host;
    NbdServer server;
    final List<String> log = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void start() throws Exception {
        pki = TestPki.create(dir.resolve("pki"), "alice");
        store = VolumeStore.open(dir.resolve("data"));
        store.create("img", BlockFormat.of(4096, 8), IMAGE_BYTES / 4096);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = transport.connect(listener.address(), new ConnectOptions(2, 256));
        TlsContext tls = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true);
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().tls(NbdTls.REQUIRE, tls).log(log::add));
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    int port() {
        return server.address().getPort();
    }

    String tlsUri(String export) {
        return "nbds://localhost:" + port() + "/" + export + "?tls-certificates=" + pki.dir;
    }

    Path randomImage(String name, long seed) throws IOException {
        Path p = dir.resolve(name);
        byte[] b = new byte[(int) IMAGE_BYTES];
        new Random(seed).nextBytes(b);
        Files.write(p, b);
        return p;
    }

    @Test
    void nbdcopyBothWaysOverTlsIsByteIdentical() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path image = randomImage("in.raw", 1);
        ok(120, "nbdcopy", image.toString(), tlsUri("img"));
        Path back = dir.resolve("back.raw");
        ok(120, "nbdcopy", tlsUri("img"), back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        assertTrue(log.stream().anyMatch(l -> l.contains("TLS TLSv1.3") && l.contains("client CN=alice")), log.toString());
    }

    @Test
    void nbdinfoListsAndDescribesOverTls() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        Run info = ok(60, "nbdinfo", tlsUri("img"));
        assertTrue(info.output().contains("export-size: " + IMAGE_BYTES), info.output());
        assertTrue(info.output().contains("uri: nbds://"), info.output());
        Run list = ok(60, "nbdinfo", "--list", tlsUri(""));
        assertTrue(list.output().contains("img"), list.output());
    }

    @Test
    void aPlaintextClientOfARequireServerGetsNoExportAndWritesNothing() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path image = randomImage("in.raw", 2);
        Run r = run(60, "nbdcopy", image.toString(), "nbd://localhost:" + port() + "/img");
        assertNotEquals(0, r.code(), r.output());
        Run i = run(60, "nbdinfo", "nbd://localhost:" + port() + "/img");
        assertNotEquals(0, i.code(), i.output());
        Path back = dir.resolve("back.raw");
        ok(120, "nbdcopy", tlsUri("img"), back.toString());
        assertArrayEquals(new byte[(int) IMAGE_BYTES], Files.readAllBytes(back), "nothing was written");
        assertTrue(log.stream().anyMatch(l -> l.contains("TLS required")), log.toString());
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
        Run info = ok(60, "qemu-img", "info", "--object", creds, "--image-opts", target);
        assertTrue(info.output().contains(IMAGE_BYTES + " bytes"), info.output());
    }

    @Test
    void qemuImgWithoutCredentialsIsRefused() throws Exception {
        assumeTool("qemu-img", "qemu-utils");
        Run r = run(60, "qemu-img", "info", "-f", "raw", "nbd://localhost:" + port() + "/img");
        assertNotEquals(0, r.code(), r.output());
    }

    // ------------------------------------------------------------------ tools

    static void assumeTool(String tool, String pkg) {
        assumeTrue(NbdInteropTest.onPath(tool), "skipped: " + tool + " is not installed (apt-get install " + pkg + ")");
    }

    record Run(int code, String output) {
    }

    Run run(long seconds, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).directory(dir.toFile()).start();
        p.getOutputStream().close();
        StringBuilder out = new StringBuilder();
        Thread reader = new Thread(() -> {
            try {
                out.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // process ended
            }
        });
        reader.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            reader.join(5000);
            throw new AssertionError(String.join(" ", cmd) + " did not finish in " + seconds + " s: " + out);
        }
        reader.join(5000);
        return new Run(p.exitValue(), out.toString());
    }

    Run ok(long seconds, String... cmd) throws IOException, InterruptedException {
        Run r = run(seconds, cmd);
        assertEquals(0, r.code(), String.join(" ", cmd) + " ->\n" + r.output() + "\nserver log: " + log);
        return r;
    }
}
