package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Typed transport options: parsing with one-line reasons, defaults, precedence and checking by transport. */
class TransportOptionsTest {
    static final TransportOption<Long> THREADS = TransportOption.number("net.threads", 2, 1, 64, "threads");
    static final TransportOption<Boolean> DIGEST = TransportOption.flag("net.digest", false, "digests");
    static final TransportOption<String> MODE = TransportOption.choice("net.mode", "auto", List.of("auto", "fast", "safe"),
            "mode");
    static final TransportOption<String> LOCAL = TransportOption.text("net.local", "IP", null, "local address");
    static final List<TransportOption<?>> NET = List.of(THREADS, DIGEST, MODE, LOCAL);

    private static String reason(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void numbersAreCheckedAgainstTheirBoundsWithOneLineReasons() {
        assertEquals(1L, THREADS.parse("1"));
        assertEquals(64L, THREADS.parse(" 64 "));
        assertEquals("net.threads must be 1 to 64, not 0", reason(() -> THREADS.parse("0")));
        assertEquals("net.threads must be 1 to 64, not 65", reason(() -> THREADS.parse("65")));
        assertEquals("net.threads must be a number, not 'four'", reason(() -> THREADS.parse("four")));
        assertEquals("net.threads must be a number, not ''", reason(() -> THREADS.parse("")));
        assertEquals("1 to 64", THREADS.values());
        assertEquals("2", THREADS.defaultText());
        assertEquals("net", THREADS.transport());
        assertTrue(reason(() -> TransportOption.number("net.x", 0, 1, 2, "d")).contains("default 0 outside 1 to 2"));
        assertTrue(reason(() -> TransportOption.number("net.x", 1, 3, 2, "d")).contains("outside"));
    }

    @Test
    void flagsTakeTrueOrFalseOnlyNotAnythingElseAsFalse() {
        assertEquals(true, DIGEST.parse("TRUE"));
        assertEquals(false, DIGEST.parse("false"));
        assertEquals("net.digest must be true or false, not 'yes'", reason(() -> DIGEST.parse("yes")));
        assertEquals("net.digest must be true or false, not '1'", reason(() -> DIGEST.parse("1")));
        TransportOption<Boolean> on = TransportOption.flag("net.on", true, "on by default");
        assertEquals(true, on.defaultValue());
        assertEquals("true", on.defaultText());
        assertEquals("true, false", on.values());
        assertEquals(false, on.parse("False"));
        assertEquals("net.on (true, false, default true)", on.toString());
        assertEquals("on by default", on.description());
    }

    @Test
    void choicesAreMatchedWithoutCaseAndListedInTheReason() {
        assertEquals("fast", MODE.parse("FAST"));
        assertEquals("net.mode must be auto, fast or safe, not 'quick'", reason(() -> MODE.parse("quick")));
        assertEquals("auto, fast, safe", MODE.values());
        assertTrue(reason(() -> TransportOption.choice("net.x", "z", List.of("a"), "d")).contains("not one of"));
        assertEquals("net.one must be a, not 'b'",
                reason(() -> TransportOption.choice("net.one", "a", List.of("a"), "d").parse("b")));
    }

    @Test
    void textMayHaveNoDefaultButMustNotBeEmpty() {
        assertNull(LOCAL.defaultValue());
        assertEquals("none", LOCAL.defaultText());
        assertEquals("10.0.0.1", LOCAL.parse(" 10.0.0.1 "));
        assertEquals("net.local must not be empty", reason(() -> LOCAL.parse("  ")));
        TransportOption<String> bind = TransportOption.text("net.bind", "IP", "0.0.0.0", "where to listen");
        assertEquals("0.0.0.0", bind.defaultValue());
        assertEquals("0.0.0.0", bind.defaultText(), "a default is written as itself");
        assertEquals("where to listen", bind.description());
        assertEquals("net.bind (IP, default 0.0.0.0)", bind.toString());
        assertEquals("net.local (IP, default none)", LOCAL.toString());
        assertEquals("net", bind.transport());
    }

    @Test
    void namesAreTransportDotSetting() {
        for (String bad : new String[] {"threads", "Net.threads", "net.", ".threads", "net.Threads", "net threads"}) {
            assertTrue(reason(() -> TransportOption.flag(bad, true, "d")).contains("<transport>.<setting>"), bad);
        }
        TransportOption.flag("rdma.soft.integrity", true, "nested names are fine");
        assertTrue(reason(() -> TransportOptions.parse(List.of("threads=4"))).contains("<transport>.<setting>"));
        assertTrue(reason(() -> TransportOptions.parse(List.of("net.threads"))).contains("NAME=VALUE"));
        assertTrue(reason(() -> TransportOptions.parse(List.of("=4"))).contains("NAME=VALUE"));
        assertEquals("a transport option is named <transport>.<setting>, e.g. tcp.ioThreads, not '.threads'",
                reason(() -> TransportOptions.parse(List.of(".threads=4"))));
        assertEquals(4L, TransportOptions.parse(List.of("n.threads=4")).get(TransportOption.number("n.threads", 1, 1, 8, "d")),
                "a one-letter transport name is a name");
        assertTrue(reason(() -> TransportOptions.NONE.with("net", "1")).contains("<transport>.<setting>"));
    }

    @Test
    void equalSettingsAreEqualWhateverTheirOrderAndComeBackAsASortedMap() {
        TransportOptions a = TransportOptions.parse(List.of("tcp.ioThreads=4", "rdma.pi=cpu"));
        TransportOptions b = TransportOptions.NONE.with("rdma.pi", "cpu").with("tcp.ioThreads", "4");
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(TransportOptions.NONE.hashCode(), a.hashCode());
        assertNotEquals(a, b.with("tcp.ioThreads", "5"));
        assertNotEquals(a, (Object) "rdma.pi=cpu tcp.ioThreads=4");
        assertEquals(List.of("rdma.pi", "tcp.ioThreads"), List.copyOf(a.asMap().keySet()));
        assertEquals("cpu", a.asMap().get("rdma.pi"));
        assertFalse(a.isEmpty());
        assertTrue(TransportOptions.NONE.isEmpty());
        assertTrue(reason(() -> TransportOptions.parse(List.of("tcp.=4"))).contains("<transport>.<setting>"));
    }

    @Test
    void unsetOptionsReadTheirDefaultsAndGivenOnesTheirParsedValue() {
        TransportOptions o = TransportOptions.parse(List.of("net.threads=8", "net.mode=Safe", "net.local=a=b"));
        assertEquals(8L, o.get(THREADS));
        assertEquals("safe", o.get(MODE));
        assertEquals("a=b", o.get(LOCAL), "only the first '=' separates name and value");
        assertEquals(false, o.get(DIGEST));
        assertTrue(o.isSet(THREADS));
        assertFalse(o.isSet(DIGEST));
        assertEquals("net.local=a=b net.mode=Safe net.threads=8", o.toString());
        assertEquals("defaults", TransportOptions.NONE.toString());
        assertTrue(TransportOptions.NONE.isEmpty());
        assertEquals("net.threads must be 1 to 64, not 0", reason(() -> TransportOptions.NONE.with("net.threads", "0")
                .get(THREADS)));
    }

    @Test
    void laterSettingsWinAndTheOriginalIsUnchanged() {
        TransportOptions file = TransportOptions.of(Map.of("net.threads", "4", "net.digest", "true"));
        TransportOptions cli = TransportOptions.parse(List.of("net.threads=6"));
        TransportOptions both = file.withAll(cli);
        assertEquals(6L, both.get(THREADS));
        assertEquals(true, both.get(DIGEST));
        assertEquals(4L, file.get(THREADS));
        assertEquals(both, TransportOptions.of(Map.of("net.threads", "6", "net.digest", "true")));
        assertEquals(both.hashCode(), TransportOptions.of(Map.of("net.digest", "true", "net.threads", "6")).hashCode());
        assertThrows(UnsupportedOperationException.class, () -> both.asMap().put("net.mode", "fast"));
    }

    @Test
    void checkRefusesUnknownNamesAndBadValuesOfItsTransportOnly() {
        TransportOptions o = TransportOptions.parse(List.of("net.threads=4", "disk.speed=warp"));
        o.check("net", NET);
        assertEquals(List.of("disk", "net"), o.transports());
        String unknown = reason(() -> o.with("net.thread", "4").check("net", NET));
        assertEquals("unknown option 'net.thread' of transport net; it takes: net.threads, net.digest, net.mode,"
                + " net.local", unknown);
        assertEquals("unknown option 'disk.speed' of transport disk; it takes none",
                reason(() -> o.check("disk", List.of())));
        assertEquals("net.digest must be true or false, not 'maybe'",
                reason(() -> o.with("net.digest", "maybe").check("net", NET)));
        o.with("network.x", "1").check("net", NET); // another transport whose name starts the same
    }

    /** Random numbers against a plain reference: in range parses to itself, out of range is refused. */
    @Test
    void randomNumbersParseExactlyWhenInRange() {
        Random r = new Random(14);
        for (int i = 0; i < 2000; i++) {
            long min = r.nextInt(1000) - 500;
            long max = min + r.nextInt(1000);
            long def = min + (max == min ? 0 : r.nextInt((int) (max - min)));
            TransportOption<Long> o = TransportOption.number("t.n", def, min, max, "d");
            long x = r.nextInt(3000) - 1500;
            if (x >= min && x <= max) {
                assertEquals(x, o.parse(Long.toString(x)));
            } else {
                assertEquals("t.n must be " + min + " to " + max + ", not " + x, reason(() -> o.parse(Long.toString(x))));
            }
            Map<String, String> m = new LinkedHashMap<>();
            m.put("t.n", Long.toString(x));
            assertEquals(x >= min && x <= max, ok(() -> TransportOptions.of(m).check("t", List.of(o))));
        }
    }

    private static boolean ok(Runnable r) {
        try {
            r.run();
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
