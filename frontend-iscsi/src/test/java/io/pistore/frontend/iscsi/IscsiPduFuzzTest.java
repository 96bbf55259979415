package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.testkit.Eventually;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A randomised fuzzer of hostile PDUs on loopback sockets: random bytes before login, logins with
 * random stages, flags and negotiation values, and after a good login random PDUs (every opcode,
 * random flags, AHS, tags, sequence numbers, CDBs and expected lengths, Data-Out at wrong offsets,
 * declared data segments far over the limit, wrong header and data digests). After each connection
 * the server must close it once the fuzzer stops sending (no hang); every few connections and at the
 * end a good initiator logs in and reads back a volume the fuzzer never names, byte for byte; at the
 * end no connection, no held write data and no pooled buffer lent remains.
 *
 * <p>Bounded for CI: {@code -Dpistore.iscsi.fuzz.iterations=N} connections (default 150),
 * {@code -Dpistore.iscsi.fuzz.seed=S} to replay one run (the seed is in every failure message).
 * Memory is bounded by caps in the code, which {@link #writeDataHeldIsCappedOverEveryConnection}
 * checks: each PDU's data segment by the length declared to the initiator (8192 bytes during login,
 * 262144 after; a larger declared length ends the connection before any of it is read), AHS by its
 * one-byte length, login text by 64 KiB, write data waiting for its Data-Out by 128 MiB a connection
 * and {@link IscsiServer.Options#maxPendingBytes} over the server, connections by
 * {@link IscsiServer.Options#maxConnections}.
 */
@Timeout(1800)
class IscsiPduFuzzTest {
    static final int ITERATIONS = Integer.getInteger("pistore.iscsi.fuzz.iterations", 150);
    static final long SEED = Long.getLong("pistore.iscsi.fuzz.seed", new Random().nextLong());
    static final String FUZZ = "fuzz";
    static final String KEPT = "kept";

    @TempDir
    Path dir;

    VolumeStore store;
    IscsiServer server;
    final AtomicLong logLines = new AtomicLong();
    byte[] kept;

    @BeforeEach
    void start() throws IOException {
        store = VolumeStore.open(dir);
        store.create(FUZZ, BlockFormat.of(512, 8), 8192);
        store.create(KEPT, BlockFormat.of(512, 8), 64);
        server = IscsiServer.serveLocal("127.0.0.1:0", new TargetService(store), new IscsiServer.Options()
                .loginTimeoutMillis(5000).maxPendingBytes(4 << 20).log(l -> logLines.incrementAndGet()));
        kept = new byte[64 * 512];
        new Random(SEED).nextBytes(kept);
        try (IscsiTestInitiator good = new IscsiTestInitiator(server.address(), IscsiServer.targetName(KEPT))) {
            IscsiTestInitiator.Result w = good.command(new byte[] {0x2A, 0, 0, 0, 0, 0, 0, 0, 64, 0}, kept, 8192,
                    kept.length, false);
            assertEquals(0, w.status());
        }
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        store.close();
    }

    private String where(int i) {
        return "seed " + SEED + " (-Dpistore.iscsi.fuzz.seed=" + SEED + "), connection " + i;
    }

    @Test
    void randomHostilePdusLeaveTheServerServingAndTheDataIntact() throws Exception {
        Random r = new Random(SEED);
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long heapBefore = rt.totalMemory() - rt.freeMemory();
        for (int i = 0; i < ITERATIONS; i++) {
            try (Socket s = new Socket("127.0.0.1", server.address().getPort())) {
                s.setSoTimeout(30_000);
                Drain drain = new Drain(s.getInputStream());
                drain.start();
                try {
                    switch (r.nextInt(4)) {
                        case 0 -> s.getOutputStream().write(garbage(r));
                        case 1 -> s.getOutputStream().write(hostileLogin(r));
                        default -> fullFeatureNoise(r, s, drain);
                    }
                    s.shutdownOutput();
                } catch (IOException closedByServer) {
                    // the server ended the connection while the fuzzer was still sending: allowed
                }
                drain.join(60_000);
                assertTrue(drain.closed, "the server did not close the connection: " + where(i));
            }
            if (i % 25 == 24) {
                goodInitiatorReadsTheKeptVolume(where(i));
            }
        }
        goodInitiatorReadsTheKeptVolume(where(ITERATIONS));
        Eventually.await("every fuzz connection ended (" + where(ITERATIONS) + ")", () -> server.connectionsOpen() == 0);
        assertEquals(0, server.pendingWriteBytes(), "write data still held: " + where(ITERATIONS));
        Eventually.await("every pooled buffer given back (" + where(ITERATIONS) + ")", () -> server.dataIn().lent() == 0);
        System.gc();
        long heapAfter = rt.totalMemory() - rt.freeMemory();
        System.out.println("iSCSI PDU fuzz: " + ITERATIONS + " connections, seed " + SEED + ", " + logLines.get()
                + " log lines, heap used after GC " + (heapBefore >> 20) + " MiB before, " + (heapAfter >> 20)
                + " MiB after");
    }

    private void goodInitiatorReadsTheKeptVolume(String where) throws IOException {
        try (IscsiTestInitiator good = new IscsiTestInitiator(server.address(), IscsiServer.targetName(KEPT),
                "HeaderDigest", "None")) {
            IscsiTestInitiator.Result rd = good.command(new byte[] {0x28, 0, 0, 0, 0, 0, 0, 0, 64, 0}, new byte[0], 0,
                    kept.length, true);
            assertEquals(0, rd.status(), where);
            assertArrayEquals(kept, rd.dataIn(), "the kept volume changed: " + where);
        }
    }

    /** Reads whatever the server sends until it closes; a read timeout means it did not. */
    static final class Drain extends Thread {
        private final InputStream in;
        /** Set once the server closed or reset the connection. */
        volatile boolean closed;

        Drain(InputStream in) {
            this.in = in;
            setDaemon(true);
        }

        @Override
        public void run() {
            byte[] b = new byte[65_536];
            try {
                while (in.read(b) >= 0) {
                    // discarded
                }
                closed = true;
            } catch (SocketTimeoutException e) {
                // still open after the read timeout: not closed
            } catch (IOException e) {
                closed = true; // reset by the server
            }
        }
    }

    static byte[] garbage(Random r) {
        byte[] b = new byte[1 + r.nextInt(600)];
        r.nextBytes(b);
        if (r.nextBoolean()) {
            b[0] = (byte) (b[0] & 0xC0 | Pdu.LOGIN);
        }
        return b;
    }

    static final String[] KEYS = {"HeaderDigest", "DataDigest", "MaxRecvDataSegmentLength", "MaxBurstLength",
        "FirstBurstLength", "ImmediateData", "InitialR2T", "DataPDUInOrder", "DataSequenceInOrder",
        "MaxOutstandingR2T", "ErrorRecoveryLevel", "MaxConnections", "DefaultTime2Wait", "DefaultTime2Retain",
        "IFMarker", "OFMarker", "SessionType", "TargetName", "InitiatorName", "AuthMethod", "CHAP_A", "CHAP_R",
        "SendTargets", "TargetPortalGroupTag", "X-Fuzz"};

    static String value(Random r) {
        return switch (r.nextInt(12)) {
            case 0 -> "";
            case 1 -> "-1";
            case 2 -> "0";
            case 3 -> Long.toString(r.nextLong());
            case 4 -> "99999999999999999999999";
            case 5 -> "CRC32C,None";
            case 6 -> r.nextBoolean() ? "Yes" : "No";
            case 7 -> "None,CHAP,KRB5";
            case 8 -> "x".repeat(r.nextInt(5000));
            case 9 -> "0x" + Long.toHexString(r.nextLong());
            case 10 -> IscsiServer.targetName(FUZZ);
            default -> Integer.toString(r.nextInt(1 << 25));
        };
    }

    static Map<String, String> keys(Random r, boolean sane) {
        Map<String, String> k = new LinkedHashMap<>();
        if (sane) {
            k.put("InitiatorName", "iqn.2026-12.io.pistore:fuzz");
            k.put("SessionType", "Normal");
            k.put("TargetName", IscsiServer.targetName(FUZZ));
            k.put("AuthMethod", "None");
        }
        int n = r.nextInt(8);
        for (int i = 0; i < n; i++) {
            String key = KEYS[r.nextInt(KEYS.length)];
            if (!sane || !k.containsKey(key)) {
                k.put(key, value(r));
            }
        }
        return k;
    }

    static byte[] hostileLogin(Random r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int pdus = 1 + r.nextInt(4);
        for (int i = 0; i < pdus; i++) {
            byte[] text = TextKeys.format(keys(r, r.nextInt(3) > 0));
            if (r.nextInt(5) == 0) {
                text = java.util.Arrays.copyOf(text, r.nextInt(text.length + 1)); // cut inside a pair
            }
            byte[] bhs = new byte[48];
            bhs[0] = (byte) (Pdu.LOGIN | (r.nextBoolean() ? 0x40 : 0));
            bhs[1] = (byte) (r.nextInt(4) == 0 ? r.nextInt(256) : 0x80 | r.nextInt(2) << 2 | r.nextInt(4));
            bhs[3] = (byte) (r.nextInt(8) == 0 ? r.nextInt(256) : 0);
            bhs[8] = 0x40;
            if (r.nextInt(8) == 0) {
                bhs[14] = (byte) r.nextInt(256); // TSIH
            }
            Pdu.putInt(bhs, 16, r.nextInt());
            Pdu.putInt(bhs, 24, r.nextInt(4) == 0 ? r.nextInt() : 1);
            out.writeBytes(frame(r, bhs, new byte[0], text, false, false));
        }
        return out.toByteArray();
    }

    /** A good login with random digests, then random PDUs framed with or without (correct or wrong) digests. */
    static void fullFeatureNoise(Random r, Socket s, Drain drain) throws IOException {
        boolean hd = r.nextBoolean();
        boolean dd = r.nextBoolean();
        Map<String, String> k = keys(r, true);
        k.put("HeaderDigest", hd ? "CRC32C" : "None");
        k.put("DataDigest", dd ? "CRC32C" : "None");
        k.put("ErrorRecoveryLevel", "0");
        byte[] bhs = new byte[48];
        bhs[0] = 0x40 | Pdu.LOGIN;
        bhs[1] = (byte) 0x83;
        bhs[8] = 0x40;
        Pdu.putInt(bhs, 16, 1);
        Pdu.putInt(bhs, 24, 1);
        s.getOutputStream().write(frame(r, bhs, new byte[0], TextKeys.format(k), false, false));
        // the drain reads the login response with the rest; the digests agreed are those offered when
        // the random keys left them valid, so framing may be wrong as often as right: both are hostile
        long cmdSn = 1;
        int pdus = 1 + r.nextInt(40);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < pdus; i++) {
            out.writeBytes(randomPdu(r, cmdSn, hd, dd));
            if (r.nextInt(3) > 0) {
                cmdSn++;
            }
        }
        s.getOutputStream().write(out.toByteArray());
    }

    static final int[] OPCODES = {Pdu.NOP_OUT, Pdu.SCSI_COMMAND, Pdu.TASK_MGMT, Pdu.LOGIN, Pdu.TEXT, Pdu.DATA_OUT,
        Pdu.LOGOUT, Pdu.SNACK};

    static byte[] randomPdu(Random r, long cmdSn, boolean hd, boolean dd) {
        byte[] bhs = new byte[48];
        int op = r.nextInt(6) == 0 ? r.nextInt(64) : OPCODES[r.nextInt(OPCODES.length)];
        bhs[0] = (byte) (op | (r.nextInt(3) == 0 ? 0x40 : 0));
        bhs[1] = (byte) r.nextInt(256);
        Pdu.putInt(bhs, 16, r.nextInt(4) == 0 ? -1 : r.nextInt(8));
        Pdu.putInt(bhs, 20, r.nextInt(3) == 0 ? r.nextInt() : r.nextInt(1 << 20));
        Pdu.putInt(bhs, 24, r.nextInt(5) == 0 ? r.nextInt() : (int) cmdSn);
        Pdu.putInt(bhs, 36, r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(4));
        Pdu.putInt(bhs, 40, r.nextInt(3) == 0 ? r.nextInt() : r.nextInt(1 << 16));
        if (r.nextInt(8) == 0) {
            bhs[9] = (byte) r.nextInt(4); // LUN
        }
        if (op == Pdu.SCSI_COMMAND) {
            byte[] cdb = cdb(r);
            System.arraycopy(cdb, 0, bhs, 32, Math.min(16, cdb.length));
            Pdu.putInt(bhs, 20, expectedLength(r));
        }
        byte[] ahs = new byte[0];
        if (r.nextInt(10) == 0) {
            ahs = new byte[4 * (1 + r.nextInt(8))];
            r.nextBytes(ahs);
            bhs[4] = (byte) (ahs.length / 4);
        }
        byte[] data = new byte[r.nextInt(4) == 0 ? r.nextInt(9000) : r.nextInt(600)];
        r.nextBytes(data);
        if (r.nextInt(12) == 0) {
            // a declared data segment far over the limit, its bytes never sent
            byte[] b = frame(r, bhs, ahs, new byte[0], hd, false);
            b[5] = (byte) 0xFF;
            b[6] = (byte) r.nextInt(256);
            b[7] = (byte) r.nextInt(256);
            return b;
        }
        return frame(r, bhs, ahs, data, hd, dd);
    }

    static int expectedLength(Random r) {
        return switch (r.nextInt(5)) {
            case 0 -> r.nextInt();
            case 1 -> 0;
            case 2 -> 512 * r.nextInt(64);
            case 3 -> 0x7FFF_FFFF;
            default -> r.nextInt(1 << 24);
        };
    }

    static final int[] CDB_OPS = {0x00, 0x03, 0x12, 0x1A, 0x5A, 0x25, 0x9E, 0xA0, 0x08, 0x28, 0xA8, 0x88, 0x0A,
        0x2A, 0xAA, 0x8A, 0x2F, 0x8F, 0x35, 0x91, 0x41, 0x93, 0x42, 0x7F, 0x89, 0x5E, 0x5F, 0x15, 0x55, 0xA3, 0xFF};

    static byte[] cdb(Random r) {
        byte[] c = new byte[r.nextInt(4) == 0 ? 32 : 16];
        r.nextBytes(c);
        c[0] = (byte) CDB_OPS[r.nextInt(CDB_OPS.length)];
        if (r.nextBoolean()) {
            for (int i = 2; i < 10; i++) {
                c[i] = 0; // an LBA inside the volume now and then
            }
            c[5] = (byte) r.nextInt(4);
        }
        return c;
    }

    /** BHS, AHS, data padded to 4 bytes, with the digests on, one of them wrong now and then. */
    static byte[] frame(Random r, byte[] bhs, byte[] ahs, byte[] data, boolean hd, boolean dd) {
        bhs[5] = (byte) (data.length >>> 16);
        bhs[6] = (byte) (data.length >>> 8);
        bhs[7] = (byte) data.length;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(bhs);
        out.writeBytes(ahs);
        if (hd) {
            byte[] h = new byte[bhs.length + ahs.length];
            System.arraycopy(bhs, 0, h, 0, bhs.length);
            System.arraycopy(ahs, 0, h, bhs.length, ahs.length);
            digest(out, PduChannel.crc32c(h, 0, h.length) ^ (r.nextInt(10) == 0 ? 1 : 0));
        }
        byte[] padded = java.util.Arrays.copyOf(data, (data.length + 3) & ~3);
        out.writeBytes(padded);
        if (dd && data.length > 0) {
            digest(out, PduChannel.crc32c(padded, 0, padded.length) ^ (r.nextInt(10) == 0 ? 1 : 0));
        }
        return out.toByteArray();
    }

    static void digest(ByteArrayOutputStream out, int crc) {
        out.write(crc);
        out.write(crc >>> 8);
        out.write(crc >>> 16);
        out.write(crc >>> 24);
    }

    /**
     * The server-wide cap on write data held for commands whose data is not all in: with 4 MiB,
     * a write that waits for 3 MiB of Data-Out is solicited, a second connection's 2 MiB write
     * answers TASK SET FULL, and once the first connection ends its 3 MiB are free again.
     */
    @Test
    void writeDataHeldIsCappedOverEveryConnection() throws Exception {
        try (Socket a = new Socket("127.0.0.1", server.address().getPort());
             Socket b = new Socket("127.0.0.1", server.address().getPort())) {
            // two initiators: one name and ISID twice would be one session reinstating the other
            DataInputStream ina = login(a, "cap-a");
            DataInputStream inb = login(b, "cap-b");
            assertEquals(Pdu.R2T, write(a, ina, 6144, 1).opcode(), "3 MiB within the 4 MiB held");
            assertEquals(3 << 20, server.pendingWriteBytes());
            Pdu full = write(b, inb, 4096, 1);
            assertEquals(Pdu.SCSI_RESPONSE, full.opcode());
            assertEquals(ScsiResult.TASK_SET_FULL, full.u8(3), "2 MiB more than the server holds");
            a.close();
            Eventually.await("the closed connection's write data is released", () -> server.pendingWriteBytes() == 0);
            assertEquals(Pdu.R2T, write(b, inb, 4096, 2).opcode(), "2 MiB once the first connection ended");
        }
    }

    private static DataInputStream login(Socket s, String name) throws IOException {
        s.setSoTimeout(20_000);
        Map<String, String> k = new LinkedHashMap<>();
        k.put("InitiatorName", "iqn.2026-12.io.pistore:" + name);
        k.put("SessionType", "Normal");
        k.put("TargetName", IscsiServer.targetName(FUZZ));
        k.put("AuthMethod", "None");
        k.put("InitialR2T", "Yes");
        s.getOutputStream().write(IscsiHostilePduTest.login(k, 0x83));
        DataInputStream in = new DataInputStream(s.getInputStream());
        Pdu r = IscsiTestInitiator.read(in);
        assertEquals(0, r.u16(36), "login status");
        return in;
    }

    /** WRITE(10) of {@code blocks} 512-byte blocks without immediate data: the first answer (R2T or status). */
    private static Pdu write(Socket s, DataInputStream in, int blocks, int cmdSn) throws IOException {
        byte[] bhs = new byte[48];
        bhs[0] = Pdu.SCSI_COMMAND;
        bhs[1] = (byte) 0xA0; // F, W
        Pdu.putInt(bhs, 16, 100 + cmdSn);
        Pdu.putInt(bhs, 20, blocks * 512);
        Pdu.putInt(bhs, 24, cmdSn);
        byte[] cdb = {0x2A, 0, 0, 0, 0, 0, 0, (byte) (blocks >>> 8), (byte) blocks, 0};
        System.arraycopy(cdb, 0, bhs, 32, cdb.length);
        s.getOutputStream().write(bhs);
        return IscsiTestInitiator.read(in);
    }
}
