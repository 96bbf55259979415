package io.pistore.spi.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

class ListenAddressTest {
    private static void parsesTo(String address, String host, int port) throws UnknownHostException {
        InetSocketAddress a = ListenAddress.parse(address, 4242, "TEST");
        assertEquals(InetAddress.getByName(host), a.getAddress(), address);
        assertEquals(port, a.getPort(), address);
    }

    @Test
    void leftOutPartsTakeTheDefaults() throws UnknownHostException {
        parsesTo(null, "127.0.0.1", 4242);
        parsesTo("", "127.0.0.1", 4242);
        parsesTo("  ", "127.0.0.1", 4242);
        parsesTo("9000", "127.0.0.1", 9000);
        parsesTo(":9000", "127.0.0.1", 9000);
        parsesTo("0", "127.0.0.1", 0);
        parsesTo("localhost", "localhost", 4242);
        parsesTo("127.0.0.2:7", "127.0.0.2", 7);
    }

    @Test
    void ipv6TakesAPortOnlyInBrackets() throws UnknownHostException {
        parsesTo("[::1]:9000", "::1", 9000);
        parsesTo("[::1]", "::1", 4242);
        parsesTo("::1", "::1", 4242);
        // several colons without brackets: the last group is part of the address, not a port
        parsesTo("fe80::1:9000", "fe80::1:9000", 4242);
    }

    @Test
    void thePortRangeIsInclusive() throws UnknownHostException {
        parsesTo("65535", "127.0.0.1", 65535);
        parsesTo("127.0.0.1:0", "127.0.0.1", 0);
        assertEquals("port must be 0 to 65535 in TEST address 'h:65536'",
                assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("h:65536", 1, "TEST")).getMessage());
    }

    @Test
    void aBadPortIsOneLineNamingTheProtocol() {
        assertEquals("bad port in TEST address 'host:http'",
                assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("host:http", 1, "TEST")).getMessage());
        assertEquals("port must be 0 to 65535 in TEST address '70000'",
                assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("70000", 1, "TEST")).getMessage());
        assertEquals("port must be 0 to 65535 in TEST address ':-1'",
                assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse(":-1", 1, "TEST")).getMessage());
    }

    @Test
    void theHostIsKeptAsWrittenWithoutBrackets() {
        assertEquals("127.0.0.1", ListenAddress.parse(":9000", 1, "TEST").getHostString(), "an empty host is the default");
        assertEquals("localhost", ListenAddress.parse("[localhost]", 1, "TEST").getHostString());
        assertEquals("localhost", ListenAddress.parse("[localhost]:9000", 1, "TEST").getHostString());
        assertEquals("localhost", ListenAddress.parse("localhost:5", 1, "TEST").getHostString());
        assertEquals("[::1", ListenAddress.parse("[::1", 1, "TEST").getHostString(), "an unclosed bracket stays");
    }
}
