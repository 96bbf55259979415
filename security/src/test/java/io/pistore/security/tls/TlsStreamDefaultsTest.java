package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link TlsStream}'s own methods (the handshake loop over steps, the whole-array write), the one-line
 * form of a library's failure, and Netty's probe of the native library as this machine has it.
 */
class TlsStreamDefaultsTest {
    /** A stream whose handshake takes the steps it is given, and which records what it was asked to write. */
    static final class Steps implements TlsStream {
        final Deque<Integer> steps = new ArrayDeque<>();
        ByteBuffer[] wrote;
        int offset = -1;
        int length = -1;

        @Override
        public int handshakeStep() {
            return steps.isEmpty() ? 0 : steps.removeFirst();
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            this.wrote = srcs;
            this.offset = offset;
            this.length = length;
            return 42;
        }

        @Override
        public String protocol() {
            return "TLSv1.3";
        }

        @Override
        public String cipherSuite() {
            return "TLS_AES_128_GCM_SHA256";
        }

        @Override
        public String peerIdentity() {
            return null;
        }

        @Override
        public boolean peerIdentityIsPsk() {
            return false;
        }

        @Override
        public int read(ByteBuffer dst) {
            return -1;
        }

        @Override
        public boolean hasBufferedInput() {
            return false;
        }

        @Override
        public int write(ByteBuffer src) {
            return 0;
        }

        @Override
        public boolean flush() {
            return true;
        }

        @Override
        public int unsentBytes() {
            return 0;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void theHandshakeWaitsForWhatEachStepAsksUntilOneSaysDone() throws IOException {
        Steps s = new Steps();
        s.steps.addAll(List.of(SelectionKey.OP_WRITE, SelectionKey.OP_READ, SelectionKey.OP_READ));
        List<Integer> waited = new ArrayList<>();
        s.handshake(waited::add);
        assertEquals(List.of(SelectionKey.OP_WRITE, SelectionKey.OP_READ, SelectionKey.OP_READ), waited);
        assertTrue(s.steps.isEmpty());
    }

    @Test
    void writingAnArrayWritesAllOfIt() throws IOException {
        Steps s = new Steps();
        ByteBuffer[] srcs = {ByteBuffer.allocate(1), ByteBuffer.allocate(2), ByteBuffer.allocate(3)};
        assertEquals(42, s.write(srcs));
        assertSame(srcs, s.wrote);
        assertEquals(0, s.offset);
        assertEquals(3, s.length);
    }

    @Test
    void aFailureWithoutACauseIsSaidSo() {
        assertEquals("no reason given", TlsEngine.oneLine(null));
        assertEquals("IllegalStateException: a\\nb", TlsEngine.oneLine(new IllegalStateException("a\\nb")));
        assertEquals("IllegalStateException: line one line two",
                TlsEngine.oneLine(new IllegalStateException("line one\n  line two")));
        assertEquals("IOException", TlsEngine.oneLine(new IOException()));
    }

    @Test
    void nettysProbeAgreesWithItself() {
        NativeTls lib = NativeTls.NETTY;
        if (lib.available()) {
            assertNull(lib.unavailabilityCause());
            assertEquals(io.netty.handler.ssl.OpenSsl.versionString(), lib.version());
            assertTrue(lib.version().length() > 0);
            assertEquals("openssl (" + lib.version() + ")", TlsEngine.OPENSSL.describe(lib));
            assertSame(TlsEngine.OPENSSL, TlsEngine.AUTO.resolve(lib));
        } else {
            assertTrue(lib.unavailabilityCause() != null, "an unavailable library says why");
            assertNull(lib.version());
            assertSame(TlsEngine.JDK, TlsEngine.AUTO.resolve(lib));
        }
        assertEquals("jdk", TlsEngine.JDK.describe(lib));
    }
}
