package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PeerChoice}: which peer a host connects to, what is closed on the way, the log line and the
 * error lines, with scripted peers (what each peer does when opened) in place of a transport.
 */
class PeerChoiceTest {
    /** What a scripted peer does when opened. */
    private enum Does { HAS_V, LACKS_V, FAILS, INTERRUPTED }

    /** The scripted transport: records every open, lists and close, in order. */
    private static final class Script implements PeerChoice.Peers<String> {
        private final List<String> names;
        private final Map<String, Does> script;
        final List<String> events = new ArrayList<>();

        Script(List<String> names, Map<String, Does> script) {
            this.names = names;
            this.script = script;
        }

        @Override
        public String open(int index) throws IOException, InterruptedException {
            String name = names.get(index);
            events.add("open " + name);
            switch (script.get(name)) {
                case FAILS:
                    throw new IOException("refused by " + name);
                case INTERRUPTED:
                    throw new InterruptedException();
                default:
                    return "opened " + name;
            }
        }

        @Override
        public boolean lists(String opened, String volume) {
            events.add("lists " + opened + " " + volume);
            return script.get(opened.substring("opened ".length())) == Does.HAS_V && volume.equals("v");
        }

        @Override
        public void close(String opened) {
            events.add("close " + opened);
        }
    }

    /** Keeps what is logged. */
    private static final class Lines implements System.Logger {
        final List<String> info = new ArrayList<>();

        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            assertEquals(Level.INFO, level, msg);
            info.add(msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            log(level, bundle, params == null ? format : MessageFormat.format(format, params), (Throwable) null);
        }
    }

    private static final List<String> ABC = List.of("a:1", "b:2", "c:3");
    private final Lines log = new Lines();

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted(); // a failing interrupt test must not leak its flag into the next test
    }

    private PeerChoice.Chosen<String> choose(List<String> peers, String volume, Script s) throws IOException {
        return PeerChoice.choose("tcp", log, String.join(",", peers), peers, volume, s);
    }

    @Test
    void theFirstPeerThatAnswersIsChosenAndTheRestAreNotTried() throws IOException {
        Script s = new Script(ABC, Map.of("a:1", Does.LACKS_V, "b:2", Does.HAS_V, "c:3", Does.HAS_V));
        PeerChoice.Chosen<String> c = choose(ABC, null, s);
        assertEquals(0, c.index());
        assertEquals("opened a:1", c.opened());
        assertEquals(List.of("open a:1"), s.events, "no volume named: nothing asked, nothing closed");
        assertEquals(List.of(), log.info);
    }

    @Test
    void aPeerThatFailsIsSkippedForTheNext() throws IOException {
        Script s = new Script(ABC, Map.of("a:1", Does.FAILS, "b:2", Does.HAS_V, "c:3", Does.HAS_V));
        PeerChoice.Chosen<String> c = choose(ABC, "v", s);
        assertEquals(1, c.index());
        assertEquals("opened b:2", c.opened());
        assertEquals(List.of("open a:1", "open b:2", "lists opened b:2 v"), s.events);
        assertEquals(List.of(), log.info, "a peer that failed is not one passed over");
    }

    @Test
    void aPeerWithoutTheVolumeIsPassedOverClosedAndNamedInOneLine() throws IOException {
        Script s = new Script(ABC, Map.of("a:1", Does.LACKS_V, "b:2", Does.HAS_V, "c:3", Does.HAS_V));
        PeerChoice.Chosen<String> c = choose(ABC, "v", s);
        assertEquals(1, c.index());
        assertEquals("opened b:2", c.opened());
        assertEquals(List.of("open a:1", "lists opened a:1 v", "open b:2", "lists opened b:2 v", "close opened a:1"),
                s.events);
        assertEquals(List.of("pistore tcp: connected to b:2, passing over a:1: no volume v there"), log.info);
    }

    @Test
    void theLineNamesEveryPeerPassedOverButNotThoseThatFailed() throws IOException {
        List<String> four = List.of("a:1", "b:2", "c:3", "d:4");
        Script s = new Script(four,
                Map.of("a:1", Does.LACKS_V, "b:2", Does.FAILS, "c:3", Does.LACKS_V, "d:4", Does.HAS_V));
        PeerChoice.Chosen<String> c = choose(four, "v", s);
        assertEquals(3, c.index());
        assertEquals(List.of("open a:1", "lists opened a:1 v", "open b:2", "open c:3", "lists opened c:3 v",
                "close opened c:3", "open d:4", "lists opened d:4 v", "close opened a:1"), s.events);
        assertEquals(List.of("pistore tcp: connected to d:4, passing over a:1, c:3: no volume v there"), log.info);
    }

    @Test
    void whenNoPeerHasTheVolumeTheFirstThatAnsweredIsKeptAndTheLaterOnesClosed() throws IOException {
        Script s = new Script(ABC, Map.of("a:1", Does.FAILS, "b:2", Does.LACKS_V, "c:3", Does.LACKS_V));
        PeerChoice.Chosen<String> c = choose(ABC, "v", s);
        assertEquals(1, c.index(), "the first that answered, as without a name");
        assertEquals("opened b:2", c.opened());
        assertEquals(List.of("open a:1", "open b:2", "lists opened b:2 v", "open c:3", "lists opened c:3 v",
                "close opened c:3"), s.events, "b kept open throughout, c closed at once");
        assertEquals(List.of(), log.info, "no line: the application finds the volume missing");
    }

    @Test
    void whenNoPeerAnswersOneLineNamesWhatEachSaid() {
        Script s = new Script(ABC, Map.of("a:1", Does.FAILS, "b:2", Does.FAILS, "c:3", Does.FAILS));
        IOException e = assertThrows(IOException.class, () -> choose(ABC, "v", s));
        assertEquals("cannot connect to any peer of tcp target a:1,b:2,c:3: a:1: refused by a:1; b:2: refused by b:2;"
                + " c:3: refused by c:3", e.getMessage());
        assertEquals(List.of("open a:1", "open b:2", "open c:3"), s.events);
        assertEquals(List.of(), log.info);
    }

    @Test
    void oneAddressThatFailsThrowsAtOnceWithItsReason() {
        List<String> one = List.of("a:1");
        Script s = new Script(one, Map.of("a:1", Does.FAILS));
        IOException e = assertThrows(IOException.class,
                () -> PeerChoice.choose("rdma", log, "a:1", one, "v", s));
        assertEquals("cannot connect to rdma target a:1: refused by a:1", e.getMessage());
        assertEquals("refused by a:1", e.getCause().getMessage(), "the transport's exception is kept as the cause");
        assertFalse(e instanceof InterruptedIOException);
    }

    @Test
    void withOneAddressTheVolumeIsNotAskedFor() throws IOException {
        List<String> one = List.of("a:1");
        Script s = new Script(one, Map.of("a:1", Does.LACKS_V));
        PeerChoice.Chosen<String> c = choose(one, "v", s);
        assertEquals(0, c.index());
        assertEquals(List.of("open a:1"), s.events, "one address: the application finds the volume missing there");
    }

    @Test
    void aPendingInterruptStopsTheChoiceBeforeAnyOpenThatWouldNotBlock() {
        Script s = new Script(ABC, Map.of("a:1", Does.HAS_V, "b:2", Does.HAS_V, "c:3", Does.HAS_V));
        Thread.currentThread().interrupt();
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> choose(ABC, "v", s));
        assertTrue(Thread.interrupted(), "the interrupt flag is set again for the caller");
        assertEquals("cannot connect to tcp target a:1,b:2,c:3: interrupted", e.getMessage());
        assertEquals(List.of(), s.events, "no peer is opened");
    }

    @Test
    void anInterruptedOpenStopsAtOnceClosingTheFallback() {
        Script s = new Script(ABC, Map.of("a:1", Does.LACKS_V, "b:2", Does.INTERRUPTED, "c:3", Does.HAS_V));
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> choose(ABC, "v", s));
        assertTrue(Thread.interrupted(), "the interrupt flag is set again for the caller");
        assertEquals("cannot connect to tcp target a:1,b:2,c:3: interrupted", e.getMessage());
        assertInstanceOf(InterruptedException.class, e.getCause());
        assertEquals(List.of("open a:1", "lists opened a:1 v", "open b:2", "close opened a:1"), s.events,
                "c is not tried; a, kept as the fallback, is closed");
        assertEquals(List.of(), log.info);
    }

    @Test
    void anInterruptedSingleAddressSaysSo() {
        List<String> one = List.of("a:1");
        Script s = new Script(one, Map.of("a:1", Does.INTERRUPTED));
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> choose(one, null, s));
        assertTrue(Thread.interrupted());
        assertEquals("cannot connect to tcp target a:1: interrupted", e.getMessage());
    }

    @Test
    void theChosenPeerIsTheObjectTheTransportOpened() throws IOException {
        List<String> two = List.of("a:1", "b:2");
        Object[] made = new Object[2];
        PeerChoice.Chosen<Object> c = PeerChoice.choose("tcp", log, "a:1,b:2", two, "v", new PeerChoice.Peers<>() {
            @Override
            public Object open(int index) {
                made[index] = new Object();
                return made[index];
            }

            @Override
            public boolean lists(Object opened, String volume) {
                return opened == made[1];
            }

            @Override
            public void close(Object opened) {
                assertSame(made[0], opened);
            }
        });
        assertSame(made[1], c.opened());
        assertEquals(Set.of("pistore tcp: connected to b:2, passing over a:1: no volume v there"), Set.copyOf(log.info));
    }
}
