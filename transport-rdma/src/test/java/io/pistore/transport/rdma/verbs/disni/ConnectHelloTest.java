package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The connect handshake's encoding: private data and the data cm_id's source address, verdicts. */
class ConnectHelloTest {
    @Test
    void helloRoundTripsV4AndV6() throws IOException {
        byte[] pd = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        for (String ip : new String[] {"192.0.2.7", "2001:db8::17"}) {
            InetSocketAddress src = new InetSocketAddress(ip, 51234);
            byte[] m = ConnectHello.encodeHello(src, ByteBuffer.wrap(pd));
            assertEquals(0x50494448, ByteBuffer.wrap(m).getInt());
            ConnectHello.Hello h = ConnectHello.decodeHello(m);
            assertEquals(src, h.dataSource());
            byte[] got = new byte[h.privateData().remaining()];
            h.privateData().get(got);
            assertArrayEquals(pd, got);
        }
        // the exact layout for IPv4
        byte[] m = ConnectHello.encodeHello(new InetSocketAddress("10.0.0.1", 0x1234), ByteBuffer.wrap(new byte[] {9}));
        assertArrayEquals(new byte[] {0x50, 0x49, 0x44, 0x48, 1, 4, 10, 0, 0, 1, 0x12, 0x34, 0, 1, 9}, m);
    }

    @Test
    void badHellosAreOneLineErrors() {
        byte[] good = ConnectHello.encodeHello(new InetSocketAddress("10.0.0.1", 1), ByteBuffer.wrap(new byte[4]));
        byte[] magic = good.clone();
        magic[0] = 0;
        byte[] version = good.clone();
        version[4] = 2;
        byte[] alen = good.clone();
        alen[5] = 5;
        byte[] lenMismatch = Arrays.copyOf(good, good.length - 1);
        byte[] tooLong = good.clone();
        tooLong[12] = 0x7f;
        String[][] cases = {
            {"not a pistore connect hello (magic 0x494448)"}, {"connect hello version 2, this side speaks 1"},
            {"connect hello address of 5 bytes (4 or 16)"}, {"connect hello carries 3 bytes of private data, says 4"},
            {"private data of"}};
        byte[][] inputs = {magic, version, alen, lenMismatch, tooLong};
        for (int i = 0; i < inputs.length; i++) {
            byte[] in = inputs[i];
            IOException e = assertThrows(IOException.class, () -> ConnectHello.decodeHello(in));
            assertTrue(e.getMessage().contains(cases[i][0]), e.getMessage());
            assertFalse(e.getMessage().contains("\n"));
        }
        assertThrows(IOException.class, () -> ConnectHello.decodeHello(new byte[3]));
        assertThrows(IllegalArgumentException.class, () -> ConnectHello.encodeHello(new InetSocketAddress("10.0.0.1", 1),
                ByteBuffer.allocate(ConnectHello.MAX_PRIVATE_DATA + 1)));
    }

    @Test
    void verdictsRoundTrip() throws IOException {
        ConnectHello.Verdict ok = ConnectHello.decodeVerdict(ConnectHello.encodeVerdict(true, null));
        assertTrue(ok.accepted());
        assertEquals("", ok.message());
        ConnectHello.Verdict no = ConnectHello.decodeVerdict(ConnectHello.encodeVerdict(false, "queue depth 0 is out of range"));
        assertFalse(no.accepted());
        assertEquals("queue depth 0 is out of range", no.message());
        byte[] bad = ConnectHello.encodeVerdict(true, "x");
        bad[4] = 7;
        assertThrows(IOException.class, () -> ConnectHello.decodeVerdict(bad));
    }
}
