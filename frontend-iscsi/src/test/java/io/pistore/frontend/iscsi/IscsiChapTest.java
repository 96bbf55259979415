package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * CHAP with libiscsi as the initiator: one-way (the target checks the initiator's secret) and
 * mutual (the initiator checks the target's); a wrong secret or no authentication is refused with
 * an authentication failure and a log line. Skipped with the reason where libiscsi is missing.
 */
@Timeout(120)
class IscsiChapTest extends IscsiLoopbackFixture {
    static final String USER = "alice";
    static final String SECRET = "alice-secret-12";
    static final String TARGET_USER = "iqn.2026-12.io.pistore:target";
    static final String TARGET_SECRET = "target-secret-123";

    @Override
    void createVolumes() throws IOException {
        store.create("v", BlockFormat.of(512, 8), 2048);
    }

    @Override
    IscsiServer.Options options() {
        return new IscsiServer.Options().chap(USER, SECRET).mutualChap(TARGET_USER, TARGET_SECRET).log(log::add);
    }

    String url(String credentials) {
        return "iscsi://" + credentials + "127.0.0.1:" + server.address().getPort() + "/" + IscsiServer.targetName("v") + "/0";
    }

    IscsiClientsTest.Ran run(List<String> env, String... cmd) throws Exception {
        Path out = Files.createTempFile(dir, "out", ".txt");
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        for (int i = 0; i < env.size(); i += 2) {
            b.environment().put(env.get(i), env.get(i + 1));
        }
        Process p = b.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not end in 60 s");
        }
        return new IscsiClientsTest.Ran(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    @Test
    void oneWayChapLetsTheRightSecretInOnly() throws Exception {
        IscsiClientsTest.need("iscsi-inq", "libiscsi-bin");
        IscsiClientsTest.Ran ok = run(List.of(), "iscsi-inq", url(USER + "%" + SECRET + "@"));
        assertEquals(0, ok.code(), ok.out());
        assertTrue(ok.out().contains("Protect:1"), ok.out());
        IscsiClientsTest.Ran wrong = run(List.of(), "iscsi-inq", url(USER + "%" + "not-the-secret-1@"));
        assertNotEquals(0, wrong.code(), wrong.out());
        assertTrue(wrong.out().contains("Authentication failure"), wrong.out());
        IscsiClientsTest.Ran none = run(List.of(), "iscsi-inq", url(""));
        assertNotEquals(0, none.code(), none.out());
        assertTrue(log.stream().anyMatch(l -> l.contains("CHAP authentication of alice failed")), log.toString());
        assertTrue(log.stream().anyMatch(l -> l.contains("ended without authentication")), log.toString());
        IscsiClientsTest.Ran discovery = run(List.of(), "iscsi-ls", "iscsi://" + USER + "%" + SECRET + "@127.0.0.1:"
                + server.address().getPort());
        assertTrue(discovery.out().contains(IscsiServer.targetName("v")), discovery.out());
    }

    @Test
    void mutualChapProvesTheTargetToo() throws Exception {
        IscsiClientsTest.need("gcc", "gcc");
        assumeTrue(Files.exists(Path.of("/usr/include/iscsi/iscsi.h")), "libiscsi's headers are not installed (libiscsi-dev)");
        Path exe = dir.resolve("pi_check");
        IscsiClientsTest.Ran cc = run(List.of(), "gcc", "-Wall", "-Werror", "-O1", "-o", exe.toString(),
                Path.of("src/test/c/pi_check.c").toAbsolutePath().toString(), "-liscsi");
        assertEquals(0, cc.code(), cc.out());
        IscsiClientsTest.Ran ok = run(List.of("PI_CHECK_TARGET_USER", TARGET_USER, "PI_CHECK_TARGET_SECRET", TARGET_SECRET),
                exe.toString(), url(USER + "%" + SECRET + "@"), "1");
        assertEquals(0, ok.code(), ok.out());
        assertTrue(ok.out().contains("\n0 failure(s)"), ok.out());
        IscsiClientsTest.Ran impostor = run(List.of("PI_CHECK_TARGET_USER", TARGET_USER, "PI_CHECK_TARGET_SECRET",
                "another-secret-9"), exe.toString(), url(USER + "%" + SECRET + "@"), "1");
        assertEquals(100, impostor.code(), impostor.out());
        assertTrue(impostor.out().contains("Invalid CHAP_R response from the target"), impostor.out());
    }

    @Test
    void secretsOutsideTheRfcLengthsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new IscsiServer.Options().chap("u", "short"));
        assertThrows(IllegalArgumentException.class, () -> new IscsiServer.Options().mutualChap("t", "short"));
    }
}
