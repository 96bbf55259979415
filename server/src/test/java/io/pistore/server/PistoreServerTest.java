package io.pistore.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.server.control.ControlSocket;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TransportOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A server built in a few lines: real listeners on loopback, real clients, nothing left after close. */
class PistoreServerTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);

    @TempDir
    Path dir;

    @Test
    void servesAMemoryVolumeOverTcpNbdAndMetricsAndLeavesNoThreadAfterClose() throws Exception {
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        byte[] block = new byte[4096];
        Arrays.fill(block, (byte) 0x5a);
        try (PistoreServer server = PistoreServer.builder()
                .memoryVolume("v", FORMAT, 256)
                .listen("tcp", "127.0.0.1:0")
                .nbd("127.0.0.1:0")
                .metrics("127.0.0.1:0")
                .build()
                .start()) {
            assertEquals(1, server.listeners().size());
            assertEquals("tcp", server.listeners().get(0).transport());
            String address = server.listeners().get(0).address();
            assertTrue(!address.endsWith(":0"), "port 0 is bound to a real port: " + address);
            assertNull(server.controlSocket(), "memory volumes have no data directory to hold a control socket");

            BlockTransport tcp = Transports.find("tcp").create(TransportOptions.NONE);
            try (tcp; HostConnection hc = tcp.connect(address, new ConnectOptions(1, 32))) {
                BlockDevice v = BlockDevice.open(hc, "v");
                v.writeSync(3, ByteBuffer.wrap(block));
                ByteBuffer back = ByteBuffer.allocate(4096);
                v.readSync(3, back);
                assertArrayEquals(block, back.array(), "tcp reads what tcp wrote");

                int nbdPort = server.nbd().address().getPort();
                if (onPath("qemu-io")) { // a real NBD client; without it the tcp host carries the test
                    String uri = "nbd://127.0.0.1:" + nbdPort + "/v";
                    String read = tool("qemu-io", "-f", "raw", "-c", "read -P 0x5a " + 3 * 4096 + " 4096", uri);
                    assertTrue(read.contains("read 4096/4096 bytes"), read);
                    tool("qemu-io", "-f", "raw", "-c", "write -P 0xa5 " + 7 * 4096 + " 4096", "-c", "flush", uri);
                    ByteBuffer viaNbd = ByteBuffer.allocate(4096);
                    v.readSync(7, viaNbd);
                    byte[] expected = new byte[4096];
                    Arrays.fill(expected, (byte) 0xa5);
                    assertArrayEquals(expected, viaNbd.array(), "tcp reads what NBD wrote, PI inserted on the way in");
                } else {
                    System.out.println("PistoreServerTest: qemu-io is not installed (apt-get install qemu-utils); "
                            + "NBD checked only for listening");
                    try (Socket s = new Socket("127.0.0.1", nbdPort)) {
                        byte[] magic = s.getInputStream().readNBytes(8);
                        assertEquals("NBDMAGIC", new String(magic, StandardCharsets.US_ASCII));
                    }
                }
            }
            String scraped = get(server.metrics().port(), "/metrics");
            assertTrue(scraped.contains("pistore_"), scraped.substring(0, Math.min(400, scraped.length())));
        }
        assertNoThreadLeftBut(before);
    }

    @Test
    void servesADataDirectoryWithItsControlSocketAndKeepsItsVolumesAcrossARestart() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("d", FORMAT, 64);
        }
        byte[] block = new byte[4096];
        Arrays.fill(block, (byte) 0x3c);
        PistoreServer.Builder builder = PistoreServer.builder().dataDir(dir).listen("tcp", "127.0.0.1:0");
        try (PistoreServer server = builder.build().start()) {
            assertNotNull(server.controlSocket());
            assertTrue(Files.exists(dir.resolve(ControlSocket.FILE)));
            try (BlockTransport tcp = Transports.find("tcp").create(TransportOptions.NONE);
                 HostConnection hc = tcp.connect(server.listeners().get(0).address(), new ConnectOptions(1, 8))) {
                BlockDevice.open(hc, "d").writeSync(9, ByteBuffer.wrap(block));
            }
        }
        assertTrue(!Files.exists(dir.resolve(ControlSocket.FILE)), "the control socket is gone with the server");
        try (PistoreServer again = builder.build().start()) { // the data directory's lock was released
            ByteBuffer back = ByteBuffer.allocate(4096);
            again.volumes().get("d").read(9, 1, io.pistore.integrity.ScatterList.of(back), null);
            assertArrayEquals(block, back.array(), "what was written before close is there after it");
        }
    }

    @Test
    void aLiveResizeThroughTheControlSocketReachesTheIscsiSessions() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("d", FORMAT, 64);
        }
        try (PistoreServer server = PistoreServer.builder().dataDir(dir)
                .iscsi("127.0.0.1:0", new io.pistore.frontend.iscsi.IscsiServer.Options()).build().start();
             Socket iscsi = new Socket("127.0.0.1", server.iscsi().address().getPort())) {
            iscsi.setSoTimeout(20_000);
            iscsiLogin(iscsi, io.pistore.frontend.iscsi.IscsiServer.targetName("d"));
            byte[] readCapacity = new byte[16];
            readCapacity[0] = 0x25;
            assertEquals(63, ByteBuffer.wrap(iscsiCommand(iscsi, 1, readCapacity, 8)).getInt(0));
            try (java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open(
                    java.net.UnixDomainSocketAddress.of(dir.resolve(ControlSocket.FILE)))) {
                String line = io.pistore.server.control.VolumeChange.resize("d", 128L * 4096).encode() + "\n";
                c.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
                ByteBuffer reply = ByteBuffer.allocate(1024);
                while (c.read(reply) >= 0) {
                    if (new String(reply.array(), 0, reply.position(), StandardCharsets.UTF_8).endsWith("blocks\n")) {
                        break;
                    }
                }
                assertTrue(new String(reply.array(), 0, reply.position(), StandardCharsets.UTF_8).startsWith("ok"));
            }
            byte[] sense = iscsiCommand(iscsi, 2, new byte[16], 0); // TEST UNIT READY
            assertEquals(0x06, sense[2] & 0x0f, "UNIT ATTENTION");
            assertEquals(0x2A, sense[12] & 0xff, "CAPACITY DATA HAS CHANGED");
            assertEquals(0x09, sense[13] & 0xff);
            assertEquals(127, ByteBuffer.wrap(iscsiCommand(iscsi, 3, readCapacity, 8)).getInt(0));
        }
    }

    /** A bare iSCSI login straight to full feature phase (no digests, AuthMethod None). */
    private static void iscsiLogin(Socket s, String target) throws IOException {
        byte[] keys = ("InitiatorName=iqn.2026-12.io.pistore:server-test\0SessionType=Normal\0TargetName=" + target
                + "\0AuthMethod=None\0").getBytes(StandardCharsets.US_ASCII);
        ByteBuffer bhs = ByteBuffer.allocate(48);
        bhs.put(0, (byte) 0x43).put(1, (byte) 0x83).putInt(4, keys.length).put(8, (byte) 0x40).putInt(16, 1).putInt(24, 1);
        iscsiSend(s, bhs.array(), keys);
        byte[] r = iscsiRead(s);
        assertEquals(0x23, r[0] & 0x3f, "login response");
        assertEquals(0, ByteBuffer.wrap(r).getShort(36), "login status");
    }

    /**
     * Sends a command that reads at most {@code edtl} bytes with CmdSN {@code cmdSn}; returns its
     * Data-In, or the sense data of a CHECK CONDITION.
     */
    private static byte[] iscsiCommand(Socket s, int cmdSn, byte[] cdb, int edtl) throws IOException {
        ByteBuffer bhs = ByteBuffer.allocate(48);
        bhs.put(0, (byte) 0x01).put(1, (byte) (0x80 | (edtl > 0 ? 0x40 : 0))).putInt(16, cmdSn).putInt(20, edtl)
                .putInt(24, cmdSn).put(32, cdb);
        iscsiSend(s, bhs.array(), new byte[0]);
        while (true) {
            byte[] r = iscsiRead(s);
            int data = (r[5] & 0xff) << 16 | (r[6] & 0xff) << 8 | r[7] & 0xff;
            if ((r[0] & 0x3f) == 0x21) { // SCSI Response
                return data > 2 ? Arrays.copyOfRange(r, 48 + 2, 48 + data) : new byte[0];
            }
            if ((r[0] & 0x3f) == 0x25 && (r[1] & 0x01) != 0) { // Data-In with status
                return Arrays.copyOfRange(r, 48, 48 + data);
            }
        }
    }

    private static void iscsiSend(Socket s, byte[] bhs, byte[] data) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(bhs);
        out.write(data);
        out.write(new byte[(4 - (data.length & 3)) & 3]);
        out.flush();
    }

    /** One PDU: its 48-byte header and then its data segment (without padding). */
    private static byte[] iscsiRead(Socket s) throws IOException {
        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        byte[] bhs = new byte[48];
        in.readFully(bhs);
        int data = (bhs[5] & 0xff) << 16 | (bhs[6] & 0xff) << 8 | bhs[7] & 0xff;
        byte[] all = Arrays.copyOf(bhs, 48 + data);
        in.readFully(all, 48, data);
        in.readFully(new byte[(4 - (data & 3)) & 3]);
        return all;
    }

    @Test
    void aListenerThatCannotListenClosesWhatHadStarted() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("d", FORMAT, 64);
        }
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String busy = "127.0.0.1:" + taken.getLocalPort();
            PistoreServer server = PistoreServer.builder().dataDir(dir).listen("tcp", "127.0.0.1:0")
                    .listen("tcp", busy).build();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, server::start);
            assertTrue(e.getMessage().startsWith("cannot listen on " + busy), e.getMessage());
            assertTrue(!Files.exists(dir.resolve(ControlSocket.FILE)), "the control socket was closed");
        }
        try (VolumeStore s = VolumeStore.open(dir)) { // the lock was released: the store was closed
            assertEquals(List.of("d"), s.list().stream().map(v -> v.name()).toList());
        }
    }

    /**
     * A Raft address already taken is a one-line refusal naming it, not the end of the process (Ratis
     * ends it when its gRPC server cannot bind, unless told not to): this test's JVM lives on to check.
     */
    @Test
    void aReplicaWhoseRaftAddressIsTakenIsRefusedWithItsReason() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            PistoreServer server = PistoreServer.builder().dataDir(dir).listen("tcp", "127.0.0.1:0")
                    .replica("n1", "127.0.0.1", port).build();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, server::start);
            assertTrue(e.getMessage().startsWith("cannot start replica n1: cannot listen for Raft peers on 127.0.0.1:"
                    + port + ": ") && e.getMessage().endsWith("Address already in use"), e.getMessage());
        }
        try (VolumeStore s = VolumeStore.open(dir)) { // what had started was closed: the data directory is free
            assertEquals(List.of(), s.list());
        }
    }

    @Test
    void partsThatDoNotFitTogetherAreRefusedBeforeAnythingStarts() {
        assertThrows(IllegalArgumentException.class,
                () -> PistoreServer.builder().dataDir(dir).memoryVolume("m", FORMAT, 8).build());
        assertThrows(IllegalArgumentException.class,
                () -> PistoreServer.builder().nbdTarget("tcp", "127.0.0.1:1").build());
        assertThrows(IllegalArgumentException.class,
                () -> PistoreServer.builder().memoryVolume("m", FORMAT, 8).replica("n1", "127.0.0.1", 1).build());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PistoreServer.builder().memoryVolume("m", FORMAT, 8).listen("no-such-transport", "x").build()
                        .start());
        assertTrue(e.getMessage().contains("no-such-transport"), e.getMessage());
    }

    /**
     * Every thread that started while the server ran has ended (shared pools aside: the JDK's
     * common fork-join pool and process reaper, and the Prometheus client's one static scheduler
     * thread, started by the first metric with exemplars in the JVM, belong to no server).
     */
    private static void assertNoThreadLeftBut(Set<Thread> before) throws InterruptedException {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (before.contains(t) || t.getName().startsWith("ForkJoinPool.commonPool")
                    || t.getName().equals("process reaper") || t.getName().startsWith("prometheus-metrics-scheduler")) {
                continue;
            }
            t.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!t.isAlive(), "thread " + t.getName() + " outlived the server");
        }
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    /** Runs a tool to its end (60 s at most) and returns its output; a non-zero exit fails the test. */
    private String tool(String... cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "tool", ".out");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        p.getOutputStream().close();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not finish in 60 s: " + Files.readString(out));
        }
        String text = Files.readString(out);
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + " ->\n" + text);
        return text;
    }

    /** One HTTP/1.0 GET on loopback, the whole answer. */
    private static String get(int port, String path) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(30_000);
            OutputStream o = s.getOutputStream();
            o.write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            o.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
