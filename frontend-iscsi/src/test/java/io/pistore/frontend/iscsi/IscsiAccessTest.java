package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.security.access.AccessRules;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-initiator access through the access rules: libiscsi's tools log in with the initiator name
 * of {@code -i}; a target the rules do not grant is refused with 0202h (authorization failure) and
 * a log line and left out of discovery; a read-only grant shows the unit write-protected and
 * refuses writes with DATA PROTECT; rules may name the CHAP name or the address instead.
 */
@Timeout(120)
class IscsiAccessTest {
    static final String HOST1 = "iqn.2026-12.org.example:host1";
    static final String READER = "iqn.2026-12.org.example:reader";
    static final String STRANGER = "iqn.2026-12.org.example:stranger";

    @TempDir
    Path dir;

    VolumeStore store;
    IscsiServer server;
    final List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();

    void start(IscsiServer.Options options, String... rules) throws IOException {
        store = VolumeStore.open(dir.resolve("volumes"));
        for (String v : new String[] {"a", "b", "c", "d"}) {
            store.create(v, BlockFormat.of(512, 8), 2048);
        }
        server = IscsiServer.serveLocal("127.0.0.1:0", new TargetService(store),
                options.access(AccessRules.parse(List.of(rules), "test rules")).log(log::add));
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        if (store != null) {
            store.close();
        }
    }

    String portal(String credentials) {
        return "iscsi://" + credentials + "127.0.0.1:" + server.address().getPort();
    }

    String url(String credentials, String volume) {
        return portal(credentials) + "/" + IscsiServer.targetName(volume) + "/0";
    }

    IscsiClientsTest.Ran run(String... cmd) throws Exception {
        Path out = Files.createTempFile(dir, "out", ".txt");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not end in 60 s");
        }
        return new IscsiClientsTest.Ran(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    @Test
    void anInitiatorGetsTheTargetsItsNameIsGrantedOnly() throws Exception {
        IscsiClientsTest.need("iscsi-inq", "libiscsi-bin");
        start(new IscsiServer.Options(), HOST1 + "  a,b  rw", READER + "  a  ro");
        IscsiClientsTest.Ran ok = run("iscsi-inq", "-i", HOST1, url("", "a"));
        assertEquals(0, ok.code(), ok.out());
        assertTrue(ok.out().contains("Protect:1"), ok.out());
        IscsiClientsTest.Ran upper = run("iscsi-inq", "-i", HOST1.toUpperCase(java.util.Locale.ROOT), url("", "b"));
        assertEquals(0, upper.code(), "iSCSI names compare without case: " + upper.out());
        IscsiClientsTest.Ran notGranted = run("iscsi-inq", "-i", HOST1, url("", "c"));
        assertNotEquals(0, notGranted.code(), notGranted.out());
        assertTrue(notGranted.out().contains("Authorization failure"), notGranted.out());
        IscsiClientsTest.Ran stranger = run("iscsi-inq", "-i", STRANGER, url("", "a"));
        assertNotEquals(0, stranger.code(), stranger.out());
        assertTrue(stranger.out().contains("Authorization failure"), stranger.out());
        assertTrue(log.stream().anyMatch(l -> l.contains("refused: target " + IscsiServer.targetName("c")
                + " is not granted to " + HOST1 + " from 127.0.0.1")), log.toString());
        assertTrue(log.stream().anyMatch(l -> l.contains("login of " + STRANGER + " refused")), log.toString());
    }

    @Test
    void discoveryListsOnlyTheGrantedTargets() throws Exception {
        IscsiClientsTest.need("iscsi-ls", "libiscsi-bin");
        start(new IscsiServer.Options(), HOST1 + "  a,b  rw", READER + "  a  ro");
        IscsiClientsTest.Ran host1 = run("iscsi-ls", "-i", HOST1, portal(""));
        assertEquals(0, host1.code(), host1.out());
        assertTrue(host1.out().contains(IscsiServer.targetName("a")), host1.out());
        assertTrue(host1.out().contains(IscsiServer.targetName("b")), host1.out());
        assertFalse(host1.out().contains(IscsiServer.targetName("c")), host1.out());
        IscsiClientsTest.Ran reader = run("iscsi-ls", "-i", READER, portal(""));
        assertTrue(reader.out().contains(IscsiServer.targetName("a")), reader.out());
        assertFalse(reader.out().contains(IscsiServer.targetName("b")), reader.out());
        IscsiClientsTest.Ran stranger = run("iscsi-ls", "-i", STRANGER, portal(""));
        assertFalse(stranger.out().contains(IscsiServer.targetName("a")), stranger.out());
    }

    @Test
    void aReadOnlyGrantShowsTheUnitWriteProtectedAndRefusesWrites() throws Exception {
        start(new IscsiServer.Options(), HOST1 + "  a  rw", READER + "  a  ro");
        byte[] block = new byte[512];
        java.util.Arrays.fill(block, (byte) 0x5A);
        byte[] write10 = {0x2A, 0, 0, 0, 0, 7, 0, 0, 1, 0};
        byte[] read10 = {0x28, 0, 0, 0, 0, 7, 0, 0, 1, 0};
        byte[] modeSense6 = {0x1A, 0x08, 0x3F, 0, (byte) 0xFF, 0};
        try (IscsiTestInitiator writer = new IscsiTestInitiator(server.address(), IscsiServer.targetName("a"),
                "InitiatorName", HOST1);
             IscsiTestInitiator reader = new IscsiTestInitiator(server.address(), IscsiServer.targetName("a"),
                "InitiatorName", READER)) {
            IscsiTestInitiator.Result ro = reader.command(write10, block, 512, 512, false);
            assertEquals(ScsiResult.CHECK_CONDITION, ro.status());
            assertEquals(ScsiResult.DATA_PROTECT, ro.senseKey());
            assertEquals(0x2700, ro.ascq());
            byte[] unmap = {0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0};
            byte[] unmapList = new byte[24];
            unmapList[1] = 22;
            unmapList[3] = 16;
            unmapList[19] = 1;
            assertEquals(ScsiResult.DATA_PROTECT, reader.command(unmap, unmapList, 24, 24, false).senseKey());
            assertArrayEquals(new byte[512], reader.command(read10, new byte[0], 0, 512, true).dataIn(),
                    "the refused write stored nothing");
            IscsiTestInitiator.Result rw = writer.command(write10, block, 512, 512, false);
            assertEquals(0, rw.status());
            assertArrayEquals(block, reader.command(read10, new byte[0], 0, 512, true).dataIn(),
                    "the read-only session reads what the read-write one wrote");
            byte[] roMode = reader.command(modeSense6, new byte[0], 0, 255, true).dataIn();
            assertEquals(0x80, roMode[2] & 0x80, "WP set for the read-only session");
            byte[] rwMode = writer.command(modeSense6, new byte[0], 0, 255, true).dataIn();
            assertEquals(0, rwMode[2] & 0x80, "WP clear for the read-write one");
        }
    }

    @Test
    void rulesMayNameTheAddressOrTheChapName() throws Exception {
        IscsiClientsTest.need("iscsi-inq", "libiscsi-bin");
        IscsiChapSecrets secrets = IscsiChapSecrets.parse(List.of("initiator alice alice-secret-12",
                "initiator bob   bob-secret-3456"), "test secrets");
        start(new IscsiServer.Options().chap(secrets), "alice  c  rw", "@127.0.0.1  d  rw");
        IscsiClientsTest.Ran alice = run("iscsi-inq", "-i", STRANGER, url("alice%alice-secret-12@", "c"));
        assertEquals(0, alice.code(), alice.out());
        IscsiClientsTest.Ran bob = run("iscsi-inq", "-i", STRANGER, url("bob%bob-secret-3456@", "c"));
        assertNotEquals(0, bob.code(), bob.out());
        assertTrue(bob.out().contains("Authorization failure"), bob.out());
        assertTrue(log.stream().anyMatch(l -> l.contains("(CHAP bob)")), log.toString());
        IscsiClientsTest.Ran byAddress = run("iscsi-inq", "-i", STRANGER, url("bob%bob-secret-3456@", "d"));
        assertEquals(0, byAddress.code(), byAddress.out());
        IscsiClientsTest.Ran wrongSecret = run("iscsi-inq", "-i", STRANGER, url("bob%not-bobs-secret@", "d"));
        assertNotEquals(0, wrongSecret.code(), wrongSecret.out());
        assertTrue(wrongSecret.out().contains("Authentication failure"), wrongSecret.out());
    }
}
