package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The TCP hello exchange on its own: {@link HelloClient} against {@link HelloServer} over loopback. */
class HelloExchangeTest {
    private static final String WHERE = "disni: connect to x: ";
    private final BlockingQueue<ConnectHello.Hello> seen = new LinkedBlockingQueue<>();
    private volatile String verdict;
    private HelloServer server;
    private InetSocketAddress control;

    private void serve() throws IOException {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        control = new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        server = new HelloServer(s, s.getLocalPort() - DisniAddress.CONTROL_PORT_OFFSET, h -> {
            seen.add(h);
            return verdict;
        });
        server.start();
    }

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
    }

    private static long deadline() {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    }

    @Test
    void anAcceptedHelloCarriesTheSourceAndPrivateData() throws Exception {
        serve();
        InetSocketAddress src = new InetSocketAddress("192.0.2.9", 40123);
        HelloClient.exchange(control, src, ByteBuffer.wrap(new byte[] {7, 8, 9}), deadline(), WHERE);
        ConnectHello.Hello h = seen.poll(30, TimeUnit.SECONDS);
        assertNotNull(h);
        assertEquals(src, h.dataSource());
        byte[] got = new byte[h.privateData().remaining()];
        h.privateData().get(got);
        assertArrayEquals(new byte[] {7, 8, 9}, got);
    }

    @Test
    void aRefusalReachesTheClientWithTheReason() throws Exception {
        serve();
        verdict = "queue 9 does not exist";
        VerbsException e = assertThrows(VerbsException.class, () -> HelloClient.exchange(control,
                new InetSocketAddress("192.0.2.9", 1), ByteBuffer.allocate(0), deadline(), WHERE));
        assertEquals(VerbsException.ECONNREFUSED, e.errno());
        assertEquals(WHERE + "rejected: queue 9 does not exist", e.getMessage());
    }

    @Test
    void aHelloThatDoesNotDecodeIsRefusedWithTheDecodersLine() throws Exception {
        serve();
        try (Socket s = new Socket()) {
            s.connect(control, 30_000);
            s.setSoTimeout(30_000);
            ConnectHello.write(new DataOutputStream(s.getOutputStream()), new byte[] {1, 2, 3, 4, 5, 6});
            ConnectHello.Verdict v = ConnectHello.decodeVerdict(ConnectHello.read(new DataInputStream(
                    s.getInputStream())));
            assertFalse(v.accepted());
            assertTrue(v.message().startsWith("not a pistore connect hello"), v.message());
        }
        assertTrue(seen.isEmpty(), "the offer never saw it");
    }

    @Test
    void noControlListenerIsARefusedConnectNamingIt() throws Exception {
        InetSocketAddress nobody;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            nobody = new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        }
        InetSocketAddress at = nobody;
        VerbsException e = assertThrows(VerbsException.class, () -> HelloClient.exchange(at,
                new InetSocketAddress("192.0.2.9", 1), ByteBuffer.allocate(0), deadline(), WHERE));
        assertEquals(VerbsException.ECONNREFUSED, e.errno());
        assertTrue(e.getMessage().startsWith(WHERE + "control connection to " + at + " failed: "), e.getMessage());
    }

    @Test
    void theControlPortInUseIsOneLineNamingIt() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress cm = new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    taken.getLocalPort() - DisniAddress.CONTROL_PORT_OFFSET);
            VerbsException e = assertThrows(VerbsException.class, () -> HelloServer.bind(cm, "here:1"));
            assertEquals(VerbsException.EINVAL, e.errno());
            assertTrue(e.getMessage().startsWith("disni: cannot open the control listener on port "
                    + taken.getLocalPort() + " beside here:1: "), e.getMessage());
        }
    }
}
