package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.app.cli.EngineCommandsTest.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve's iSCSI options: {@code --iscsi-chap} takes the CHAP secrets from a private file (one-way
 * and mutual), {@code --iscsi-access} the rules by initiator name; libiscsi's {@code iscsi-inq} and
 * {@code iscsi-ls} log in with the URL's credentials and {@code -i}. A file open to others, or an
 * option without {@code --iscsi}, stops serve with one usage line.
 */
@Timeout(120)
class IscsiServeCliTest {
    static final String HOST1 = "iqn.2026-12.org.example:host1";

    @TempDir
    Path dir;

    private Path privateFile(String name, String text) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, text);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }

    private static int iscsiPort(String out) {
        Matcher m = Pattern.compile("iSCSI on 127\\.0\\.0\\.1:(\\d+)").matcher(out);
        assertTrue(m.find(), out);
        return Integer.parseInt(m.group(1));
    }

    private Result tool(String... cmd) throws Exception {
        Path out = Files.createTempFile(dir, "out", ".txt");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not end in 60 s");
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), "");
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void chapSecretsAndAccessRulesFromFiles() throws Exception {
        assumeTrue(onPath("iscsi-inq") && onPath("iscsi-ls"), "iscsi-inq is not installed (Debian package libiscsi-bin)");
        Path chap = privateFile("chap", "initiator alice alice-secret-12\ntarget iqn.2026-12.io.pistore:t target-secret-123\n");
        Path access = privateFile("access", HOST1 + "  v  rw\n");
        try (ServeThread serve = new ServeThread("serve", "--memory-volume", "v:1MiB:512+8", "--memory-volume",
                "w:1MiB:512+8", "--transport", "local", "--listen", "iscsi-cli-test", "--iscsi", "127.0.0.1:0",
                "--iscsi-chap", chap.toString(), "--iscsi-access", access.toString())) {
            serve.awaitOutput(o -> o.contains("iSCSI on"));
            String out = serve.out();
            assertTrue(out.contains(", CHAP (" + chap + ", 1 initiator, mutual), 1 access rule(s) from " + access),
                    out + " / " + serve.err());
            String portal = "127.0.0.1:" + iscsiPort(out);
            String v = "/iqn.2026-12.io.pistore:v/0";
            Result ok = tool("iscsi-inq", "-i", HOST1, "iscsi://alice%alice-secret-12@" + portal + v);
            assertEquals(0, ok.code(), ok.out());
            assertTrue(ok.out().contains("Protect:1"), ok.out());
            Result wrong = tool("iscsi-inq", "-i", HOST1, "iscsi://alice%wrong-secret-12@" + portal + v);
            assertNotEquals(0, wrong.code(), wrong.out());
            assertTrue(wrong.out().contains("Authentication failure"), wrong.out());
            Result other = tool("iscsi-inq", "-i", "iqn.2026-12.org.example:other", "iscsi://alice%alice-secret-12@"
                    + portal + v);
            assertTrue(other.out().contains("Authorization failure"), other.out());
            Result ls = tool("iscsi-ls", "-i", HOST1, "iscsi://alice%alice-secret-12@" + portal);
            assertTrue(ls.out().contains("iqn.2026-12.io.pistore:v"), ls.out());
            assertTrue(!ls.out().contains("iqn.2026-12.io.pistore:w"), "w is not granted: " + ls.out());
            assertTrue(serve.out().contains("CHAP authentication of alice failed"), serve.out());
            assertTrue(serve.out().contains("is not granted to iqn.2026-12.org.example:other"), serve.out());
            assertEquals(0, serve.stop(), serve.err());
        }
    }

    @Test
    void aSecretsFileOpenToOthersOrWithoutIscsiIsAUsageError() throws Exception {
        Path chap = privateFile("chap", "initiator alice alice-secret-12\n");
        Files.setPosixFilePermissions(chap, PosixFilePermissions.fromString("rw-r-----"));
        Result r = EngineCommandsTest.run("serve", "--memory-volume", "v:1MiB", "--transport", "local", "--listen",
                "iscsi-cli-test-2", "--iscsi", "127.0.0.1:0", "--iscsi-chap", chap.toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --iscsi-chap: " + chap + " is readable by its group (0640): chmod 600 " + chap
                + "\n", r.err());
        Files.setPosixFilePermissions(chap, PosixFilePermissions.fromString("rw-------"));
        r = EngineCommandsTest.run("serve", "--memory-volume", "v:1MiB", "--transport", "local", "--listen",
                "iscsi-cli-test-3", "--iscsi-chap", chap.toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --iscsi-chap needs --iscsi: it sets up the iSCSI listener\n", r.err());
        Path bad = privateFile("bad", "initiator alice short\n");
        r = EngineCommandsTest.run("serve", "--memory-volume", "v:1MiB", "--transport", "local", "--listen",
                "iscsi-cli-test-4", "--iscsi", "127.0.0.1:0", "--iscsi-chap", bad.toString());
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --iscsi-chap: CHAP secrets file " + bad + " line 1: the secret of 'alice' has 5 "
                + "characters; CHAP secrets have 12 to 255\n", r.err());
        r = EngineCommandsTest.run("serve", "--memory-volume", "v:1MiB", "--transport", "local", "--listen",
                "iscsi-cli-test-5", "--iscsi", "127.0.0.1:0", "--iscsi-spin-us", "10001");
        assertEquals(2, r.code(), r.out() + " / " + r.err());
        assertEquals("pistore serve: --iscsi-spin-us must be 0 to 10000, not 10001\n", r.err());
    }
}
