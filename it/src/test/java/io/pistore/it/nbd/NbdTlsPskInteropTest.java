package io.pistore.it.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.security.tls.PskKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * libnbd's nbdcopy and nbdinfo, and qemu-img, over TLS with pre-shared keys ({@code nbds://alice@HOST:PORT/EXPORT
 * ?tls-psk-file=FILE}; qemu's {@code tls-creds-psk}; GnuTLS underneath) against a server that requires TLS: data both ways, and a
 * client with an unknown identity or a wrong key refused with its log line and nothing written. A
 * key file made by GnuTLS's psktool is read as it is. A test whose tool is missing is skipped and
 * says which package has it ({@code .ci/run} installs them).
 */
@Timeout(180)
class NbdTlsPskInteropTest extends NbdTlsInteropKit {
    private static final String ALICE_KEY = "5f3c9a1be27d48c6a0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4e5f6071";

    Path keys;

    @Override
    NbdServer.Options tlsOptions() throws Exception {
        keys = keyFile("keys.psk", "alice:" + ALICE_KEY);
        return options(keys);
    }

    static NbdServer.Options options(Path keyFile) {
        return new NbdServer.Options().tls(NbdTls.REQUIRE, PskKeys.read(keyFile));
    }

    Path keyFile(String name, String... lines) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, String.join("\n", lines) + "\n");
        java.nio.file.Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")); // a key file open to others is refused
        return p;
    }

    String uri(String identity, String export, Path keyFile) {
        return "nbds://" + identity + "@127.0.0.1:" + server.address().getPort() + "/" + export + "?tls-psk-file="
                + keyFile;
    }

    void assertNothingWritten() throws Exception {
        Path back = dir.resolve("back.raw");
        ok(120, "nbdcopy", uri("alice", "img", keys), back.toString());
        assertArrayEquals(new byte[(int) IMAGE_BYTES], Files.readAllBytes(back), "nothing was written");
    }

    @Test
    void nbdcopyBothWaysWithAPreSharedKeyIsByteIdentical() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path image = randomImage("in.raw", 1);
        ok(120, "nbdcopy", image.toString(), uri("alice", "img", keys));
        Path back = dir.resolve("back.raw");
        ok(120, "nbdcopy", uri("alice", "img", keys), back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        assertTrue(logs(l -> l.contains("TLS TLSv1.3 TLS_AES_128_GCM_SHA256, PSK identity alice")),
                log.toString());
    }

    @Test
    void nbdinfoListsAndDescribesWithAPreSharedKey() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        ToolRun info = ok(60, "nbdinfo", uri("alice", "img", keys));
        assertTrue(info.output().contains("export-size: " + IMAGE_BYTES), info.output());
        ToolRun list = ok(60, "nbdinfo", "--list", uri("alice", "", keys));
        assertTrue(list.output().contains("img"), list.output());
    }

    @Test
    void anUnknownIdentityIsRefusedAndWritesNothing() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path mallory = keyFile("mallory.psk", "mallory:" + ALICE_KEY);
        ToolRun r = run(60, "nbdcopy", randomImage("in.raw", 2).toString(), uri("mallory", "img", mallory));
        assertNotEquals(0, r.code(), r.output());
        assertTrue(logs("TLS handshake failed: unknown PSK identity 'mallory'"),
                log.toString());
        assertNothingWritten();
    }

    @Test
    void aWrongKeyIsRefusedAndWritesNothing() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path wrong = keyFile("wrong.psk", "alice:" + ALICE_KEY.replace('5', '6'));
        ToolRun r = run(60, "nbdcopy", randomImage("in.raw", 3).toString(), uri("alice", "img", wrong));
        assertNotEquals(0, r.code(), r.output());
        assertTrue(logs("TLS handshake failed: wrong key for PSK identity 'alice'"),
                log.toString());
        assertNothingWritten();
    }

    @Test
    void aPlaintextClientGetsNoExport() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        ToolRun r = run(60, "nbdinfo", "nbd://127.0.0.1:" + server.address().getPort() + "/img");
        assertNotEquals(0, r.code(), r.output());
        assertTrue(logs(l -> l.contains("TLS required")), log.toString());
    }

    @Test
    void aKeyFileMadeByPsktoolIsReadAsItIs() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        assumeTool("psktool", "gnutls-bin");
        Path made = dir.resolve("made.psk");
        ok(60, "psktool", "-u", "bob", "-p", made.toString());
        // as SECURITY.md says after psktool: a key file open to others is refused
        Files.setPosixFilePermissions(made, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        serve(options(made));
        ToolRun info = ok(60, "nbdinfo", uri("bob", "img", made));
        assertTrue(info.output().contains("export-size: " + IMAGE_BYTES), info.output());
        assertTrue(logs(l -> l.contains("PSK identity bob")), log.toString());
    }

    @Test
    void qemuImgConvertsIntoAndOutOfAVolumeWithPskCredentials() throws Exception {
        assumeTool("qemu-img", "qemu-utils");
        // qemu reads DIR/keys.psk and picks the line of its username
        Path creds = Files.createDirectories(dir.resolve("qemu-psk"));
        Files.copy(keys, creds.resolve("keys.psk"));
        Path image = randomImage("in.raw", 4);
        String object = "tls-creds-psk,id=tls0,dir=" + creds + ",username=alice,endpoint=client";
        String target = "driver=nbd,host=127.0.0.1,port=" + server.address().getPort() + ",export=img,tls-creds=tls0";
        ok(120, "qemu-img", "convert", "-n", "--object", object, "-f", "raw", image.toString(),
                "--target-image-opts", target);
        Path back = dir.resolve("back.raw");
        ok(120, "qemu-img", "convert", "--object", object, "--image-opts", target, "-O", "raw", back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        assertTrue(logs(l -> l.contains("PSK identity alice")), log.toString());
    }
}
