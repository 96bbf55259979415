package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile and broken PDUs on real loopback sockets: each ends (or is rejected on) its own
 * connection only, with a log line, and the server goes on serving logins; negotiation values out
 * of range are answered with Reject.
 */
@Timeout(60)
class IscsiHostilePduTest {
    @TempDir
    Path dir;

    VolumeStore store;
    IscsiServer server;
    final java.util.List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws IOException {
        store = VolumeStore.open(dir);
        store.create("v", BlockFormat.of(512, 8), 1024);
        server = IscsiServer.serveLocal("127.0.0.1:0", new TargetService(store),
                new IscsiServer.Options().loginTimeoutMillis(5000).log(log::add));
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        store.close();
    }

    Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", server.address().getPort());
        s.setSoTimeout(10_000);
        return s;
    }

    static byte[] login(Map<String, String> keys, int flags) {
        byte[] data = TextKeys.format(keys);
        byte[] b = new byte[48 + ((data.length + 3) & ~3)];
        b[0] = 0x43; // immediate login
        b[1] = (byte) flags;
        b[5] = (byte) (data.length >>> 16);
        b[6] = (byte) (data.length >>> 8);
        b[7] = (byte) data.length;
        b[8] = 0x40; // ISID
        Pdu.putInt(b, 16, 7); // ITT
        Pdu.putInt(b, 24, 1); // CmdSN
        System.arraycopy(data, 0, b, 48, data.length);
        return b;
    }

    static Map<String, String> normal(String... more) {
        Map<String, String> k = new LinkedHashMap<>();
        k.put("InitiatorName", "iqn.2026-12.io.pistore:hostile");
        k.put("SessionType", "Normal");
        k.put("TargetName", IscsiServer.targetName("v"));
        k.put("AuthMethod", "None");
        for (int i = 0; i < more.length; i += 2) {
            k.put(more[i], more[i + 1]);
        }
        return k;
    }

    /** A full login (security stage straight to full feature); returns the stream after it. */
    DataInputStream loggedIn(Socket s, String... keys) throws IOException {
        s.getOutputStream().write(login(normal(keys), 0x80 | 0x03)); // T, CSG 0, NSG 3
        DataInputStream in = new DataInputStream(s.getInputStream());
        Pdu r = IscsiTestInitiator.read(in);
        assertEquals(Pdu.LOGIN_RESPONSE, r.opcode());
        assertEquals(0, r.u16(36), "login status");
        return in;
    }

    static boolean closedByServer(Socket s) throws IOException {
        try {
            return s.getInputStream().read(new byte[4096]) < 0 || s.getInputStream().read(new byte[65536]) < 0;
        } catch (java.net.SocketException e) {
            return true; // reset
        }
    }

    void serverStillLogsIn() throws IOException {
        try (Socket s = connect()) {
            loggedIn(s);
        }
    }

    @Test
    void garbageEndsItsConnectionOnly() throws IOException {
        Random r = new Random(1);
        for (int i = 0; i < 20; i++) {
            try (Socket s = connect()) {
                byte[] junk = new byte[48 + r.nextInt(200)];
                r.nextBytes(junk);
                junk[0] = (byte) (junk[0] & 0xC0 | 0x03); // looks like a login, with random fields
                s.getOutputStream().write(junk);
                s.shutdownOutput();
                assertTrue(closedByServer(s), "connection " + i + " still open");
            }
        }
        serverStillLogsIn();
    }

    @Test
    void aDataSegmentLongerThanDeclaredEndsTheConnection() throws IOException {
        try (Socket s = connect()) {
            byte[] b = login(normal(), 0x83);
            b[5] = (byte) 0xFF; // 16 MiB of login text announced
            s.getOutputStream().write(b);
            assertTrue(closedByServer(s));
        }
        assertTrue(log.stream().anyMatch(l -> l.contains("more than the 8192 declared")), log.toString());
        serverStillLogsIn();
    }

    @Test
    void negotiationValuesOutOfRangeAreRejected() throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write(login(normal("MaxBurstLength", "12abc", "HeaderDigest", "MD5",
                    "ErrorRecoveryLevel", "9", "X-Unknown", "1", "FirstBurstLength", "1024"), 0x83));
            Pdu r = IscsiTestInitiator.read(new DataInputStream(s.getInputStream()));
            assertEquals(0, r.u16(36));
            String text = new String(r.data, StandardCharsets.UTF_8);
            assertTrue(text.contains("MaxBurstLength=Reject\0"), text);
            assertTrue(text.contains("HeaderDigest=Reject\0"), text);
            assertTrue(text.contains("ErrorRecoveryLevel=Reject\0"), text);
            assertTrue(text.contains("X-Unknown=NotUnderstood\0"), text);
            assertTrue(text.contains("FirstBurstLength=1024\0"), text);
        }
    }

    @Test
    void aLoginToAnUnknownTargetIsRefusedWithTargetNotFound() throws IOException {
        try (Socket s = connect()) {
            Map<String, String> k = normal();
            k.put("TargetName", IscsiServer.targetName("nope"));
            s.getOutputStream().write(login(k, 0x83));
            Pdu r = IscsiTestInitiator.read(new DataInputStream(s.getInputStream()));
            assertEquals(0x0203, r.u16(36));
            assertTrue(closedByServer(s));
        }
    }

    @Test
    void anUnknownOpcodeIsRejectedAndTheConnectionGoesOn() throws IOException {
        try (Socket s = connect()) {
            DataInputStream in = loggedIn(s);
            OutputStream out = s.getOutputStream();
            byte[] odd = new byte[48];
            odd[0] = 0x1c; // no such initiator opcode
            Pdu.putInt(odd, 16, 9);
            out.write(odd);
            Pdu rej = IscsiTestInitiator.read(in);
            assertEquals(Pdu.REJECT, rej.opcode());
            assertEquals(0x05, rej.u8(2));
            byte[] nop = new byte[48 + 4];
            nop[0] = 0x40; // immediate NOP-Out
            nop[1] = (byte) 0x80;
            nop[7] = 4;
            Pdu.putInt(nop, 16, 11);
            Pdu.putInt(nop, 20, -1);
            Pdu.putInt(nop, 24, 1);
            nop[48] = 'p';
            out.write(nop);
            Pdu ping = IscsiTestInitiator.read(in);
            assertEquals(Pdu.NOP_IN, ping.opcode());
            assertEquals(11, ping.itt());
            assertEquals('p', ping.data[0]);
        }
    }

    @Test
    void aHeaderDigestErrorEndsTheConnection() throws IOException {
        try (Socket s = connect()) {
            loggedIn(s, "HeaderDigest", "CRC32C");
            byte[] nop = new byte[48 + 4];
            nop[0] = 0x40;
            nop[1] = (byte) 0x80;
            Pdu.putInt(nop, 16, 11);
            Pdu.putInt(nop, 20, -1);
            int crc = PduChannel.crc32c(nop, 0, 48) ^ 1; // one bit wrong
            nop[48] = (byte) crc;
            nop[49] = (byte) (crc >>> 8);
            nop[50] = (byte) (crc >>> 16);
            nop[51] = (byte) (crc >>> 24);
            s.getOutputStream().write(nop);
            assertTrue(closedByServer(s));
        }
        assertTrue(log.stream().anyMatch(l -> l.contains("header digest error")), log.toString());
        serverStillLogsIn();
    }

    @Test
    void aPduCutShortEndsOnlyItsConnection() throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write(java.util.Arrays.copyOf(login(normal(), 0x83), 30));
            s.shutdownOutput();
            try {
                assertTrue(closedByServer(s));
            } catch (EOFException e) {
                // closed
            }
        }
        serverStillLogsIn();
    }
}
