package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.QpConfig;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The kept hellos on their own, on a clock the test moves: matching, expiry, release of the resources. */
class PendingHellosTest {
    private final FakeDisni fake = new FakeDisni("127.0.0.1");
    private final AtomicLong now = new AtomicLong(1_000);
    private final PendingHellos hellos = new PendingHellos(100, now::get);

    /** An accept with its own send and receive CQ, as the fake records them. */
    private record Made(ConnectHandler.Accept accept, FakeDisni.FCq send, FakeDisni.FCq recv) {
    }

    private Made accept() {
        FakeDisni.FCq s = new FakeDisni.FCq(8);
        FakeDisni.FCq r = new FakeDisni.FCq(8);
        return new Made(new ConnectHandler.Accept(null, new DisniCq(fake, s), new DisniCq(fake, r),
                new QpConfig(8, 8, 1, 1, 7, false), "ctx"), s, r);
    }

    @Test
    void anEntryIsTakenOnceByItsExactSource() {
        InetSocketAddress a = new InetSocketAddress("127.0.0.1", 5000);
        Made m = accept();
        ByteBuffer pd = ByteBuffer.wrap(new byte[] {1, 2});
        hellos.add(a, m.accept(), pd);
        PendingHellos.Pending p = hellos.take(a);
        assertSame(m.accept(), p.accept());
        assertSame(pd, p.privateData());
        assertEquals(1_100, p.expiresNanos());
        assertNull(hellos.take(a), "taken once");
        assertEquals(0, hellos.size());
        assertFalse(m.send().destroyed, "a taken entry's CQs are the connection's now");
    }

    @Test
    void aHelloNotTakenWithinItsTimeIsDroppedAndItsCqsClosed() {
        InetSocketAddress a = new InetSocketAddress("127.0.0.1", 5000);
        Made m = accept();
        hellos.add(a, m.accept(), ByteBuffer.allocate(0));
        now.addAndGet(100);
        assertEquals(1, hellos.size(), "still alive at its expiry time");
        now.addAndGet(1);
        assertNull(hellos.take(a), "expired");
        assertEquals(0, hellos.size());
        assertTrue(m.send().destroyed);
        assertTrue(m.recv().destroyed);
    }

    @Test
    void clearReleasesEverythingOnceAndASharedCqOnce() {
        Made m = accept();
        hellos.add(new InetSocketAddress("127.0.0.1", 5000), m.accept(), ByteBuffer.allocate(0));
        FakeDisni.FCq shared = new FakeDisni.FCq(8);
        DisniCq cq = new DisniCq(fake, shared);
        hellos.add(new InetSocketAddress("127.0.0.1", 5001), new ConnectHandler.Accept(null, cq, cq,
                new QpConfig(8, 8, 1, 1, 7, false), null), ByteBuffer.allocate(0));
        hellos.clear();
        assertEquals(0, hellos.size());
        assertTrue(m.send().destroyed);
        assertTrue(m.recv().destroyed);
        assertTrue(shared.destroyed);
    }
}
