package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** The one rule tcp and rdma read a target's list of peers by. */
class PeerListTest {
    /** A parser that knows HOST:PORT with a numeric port, and names a peer in lower case. */
    private static String hostPort(String a) throws IOException {
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || !a.substring(colon + 1).matches("[0-9]+")) {
            throw new IOException("an x address is HOST:PORT, not '" + a + "'");
        }
        return a;
    }

    private static PeerList<String> parse(String target) throws IOException {
        return PeerList.parse("x", target, PeerListTest::hostPort, a -> a.toLowerCase(Locale.ROOT));
    }

    private static String refused(String target) {
        return assertThrows(IOException.class, () -> parse(target)).getMessage();
    }

    @Test
    void aListKeepsItsOrderTrimsItsElementsAndGoesRoundRobin() throws IOException {
        PeerList<String> l = parse("A:1, b:2 ,c:3");
        assertEquals(3, l.size());
        assertEquals(List.of("a:1", "b:2", "c:3"), l.names());
        assertEquals("b:2", l.address(1), "the parser's address of the trimmed element");
        assertEquals("a:1", l.name(0));
        assertEquals(List.of(1, 2, 0), List.of(l.next(0), l.next(1), l.next(2)));
        assertEquals("a:1,b:2,c:3", l.toString());
    }

    @Test
    void oneAddressIsAListOfOneThatComesBackToItself() throws IOException {
        PeerList<String> l = parse("h:9");
        assertEquals(1, l.size());
        assertEquals(0, l.next(0));
    }

    @Test
    void whatIsRefusedIsNamedInOneLine() {
        assertEquals("the x target is HOST:PORT or a list HOST:PORT,HOST:PORT,..., not 'null'", refused(null));
        assertEquals("the x target is HOST:PORT or a list HOST:PORT,HOST:PORT,..., not ' '", refused(" "));
        assertEquals("peer 2 of x target list 'a:1,' is empty", refused("a:1,"));
        assertEquals("peer 1 of x target list ', a:1' is empty", refused(", a:1"));
        assertEquals("peer 2 of x target list 'a:1,b': an x address is HOST:PORT, not 'b'",
                refused("a:1,b"));
        assertEquals("an x address is HOST:PORT, not 'b'", refused("b"), "one address: the parser's reason alone");
        assertEquals("peer a:1 is listed twice in x target list 'a:1,A:1'", refused("a:1,A:1"),
                "the same peer by its name, however it was spelled");
    }
}
