package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The event routing on its own (events handed to {@code dispatch} directly, no event thread). */
class CmEventPumpTest {
    private final FakeDisni fake = new FakeDisni("127.0.0.1");
    private final FakeDisni.FChannel ch = (FakeDisni.FChannel) fake.createEventChannel();
    private final CmEventPump pump = new CmEventPump(fake, ch);

    private FakeDisni.FId id() throws Exception {
        return (FakeDisni.FId) fake.createId(ch);
    }

    @Test
    void aConnectWaitingOnAnIdGetsItsEventsInOrderUntilItStops() throws Exception {
        FakeDisni.FId id = id();
        FakeDisni.FId other = id();
        BlockingQueue<CmEventType> q = pump.waitOn(id);
        pump.dispatch(new DisniOps.CmEvent(CmEventType.ADDR_RESOLVED, id, null));
        pump.dispatch(new DisniOps.CmEvent(CmEventType.ROUTE_ERROR, other, null));
        pump.dispatch(new DisniOps.CmEvent(CmEventType.ROUTE_RESOLVED, id, null));
        assertEquals(CmEventType.ADDR_RESOLVED, q.poll());
        assertEquals(CmEventType.ROUTE_RESOLVED, q.poll());
        assertTrue(q.isEmpty(), "another id's event is not this connect's");
        pump.stopWaiting(id);
        pump.dispatch(new DisniOps.CmEvent(CmEventType.ESTABLISHED, id, null));
        assertTrue(q.isEmpty());
        assertFalse(id.destroyed || other.destroyed, "events nobody waits for destroy nothing");
    }

    @Test
    void aConnectRequestOnNoListenerIsRefusedByDestroyingItsId() throws Exception {
        FakeDisni.FId req = id();
        FakeDisni.FId unknownListener = id();
        pump.dispatch(new DisniOps.CmEvent(CmEventType.CONNECT_REQUEST, req, unknownListener));
        assertTrue(req.destroyed);
        FakeDisni.FId req2 = id();
        pump.dispatch(new DisniOps.CmEvent(CmEventType.CONNECT_REQUEST, req2, null));
        assertTrue(req2.destroyed);
        assertFalse(unknownListener.destroyed);
        assertEquals(2, fake.destroyedIds.get());
    }

    @Test
    void theThreadRoutesWhatTheChannelDelivers() throws Exception {
        FakeDisni.FId id = id();
        BlockingQueue<CmEventType> q = pump.waitOn(id);
        pump.start();
        try {
            fake.resolveAddr(id, new InetSocketAddress("127.0.0.1", 4420), 1000);
            assertEquals(CmEventType.ADDR_RESOLVED, q.poll(30, TimeUnit.SECONDS));
        } finally {
            pump.stop();
        }
        assertTrue(pump.stopped());
    }
}
