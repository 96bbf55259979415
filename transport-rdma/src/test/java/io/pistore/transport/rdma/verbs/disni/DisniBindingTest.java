package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvSendWR;
import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The DiSNI binding's logic against a fake of the DiSNI seam: connection management (handshake,
 * private data, fail-fast errors, deadlines), the SVC caches and the mapping of what is posted, the
 * completion ring, registrations, the absent integrity MR.
 */
class DisniBindingTest {
    private static final QpConfig CFG = new QpConfig(40, 9, 1, 1, 7, false);
    private final FakeDisni fake = new FakeDisni("127.0.0.1");
    private DisniDevice target;
    private DisniDevice host;

    @AfterEach
    void close() {
        if (host != null) host.close();
        if (target != null) target.close();
    }

    private DisniDevice device() throws VerbsException {
        return new DisniDevice(fake, "127.0.0.1", List.of(), DisniVerbsProvider.caps(1024));
    }

    /** An RDMA port whose control port (the next one) was just free. */
    private static int rdmaPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort() - DisniAddress.CONTROL_PORT_OFFSET;
        }
    }

    /** A handler that accepts with its own PD and CQ and records what it saw. */
    final class Recorder implements ConnectHandler {
        final ProtectionDomain pd;
        final BlockingQueue<ByteBuffer> requests = new java.util.concurrent.LinkedBlockingQueue<>();
        final BlockingQueue<RcConnection> established = new ArrayBlockingQueue<>(4);
        final BlockingQueue<RcConnection> disconnected = new ArrayBlockingQueue<>(4);
        volatile String reject;

        Recorder(DisniDevice d) throws VerbsException {
            pd = d.allocPd();
        }

        @Override
        public Accept onConnectRequest(String peer, ByteBuffer privateData) throws IOException {
            requests.add(privateData);
            if (reject != null) {
                throw new IOException(reject);
            }
            CompletionQueue cq = target.createCq(64);
            return new Accept(pd, cq, cq, new QpConfig(20, 5, 1, 1, 6, false), "ctx-" + peer);
        }

        @Override
        public void onEstablished(RcConnection c) {
            established.add(c);
        }

        @Override
        public void onDisconnected(RcConnection c) {
            disconnected.add(c);
        }
    }

    private static ByteBuffer pdata() {
        return ByteBuffer.wrap(new byte[] {0x50, 0x49, 0x53, 0x54, 0, 0, 0, 3, 0, 0, 0, 32});
    }

    @Test
    void connectCarriesPrivateDataAndEstablishesBothSides() throws Exception {
        target = device();
        host = device();
        Recorder r = new Recorder(target);
        int port = rdmaPort();
        Listener l = target.listen("127.0.0.1:" + port, r);
        assertEquals("127.0.0.1:" + port, l.address());
        ProtectionDomain pd = host.allocPd();
        CompletionQueue cq = host.createCq(64);
        RcConnection c = host.connect("127.0.0.1:" + port, pd, cq, cq, CFG, pdata(), 10_000);
        RcConnection s = r.established.poll(10, TimeUnit.SECONDS);
        assertNotNull(s, "the passive side heard ESTABLISHED");
        byte[] got = new byte[12];
        s.peerPrivateData().get(got);
        assertArrayEquals(pdata().array(), got, "private data reached the handler through the hello");
        assertEquals(0, c.peerPrivateData().remaining());
        assertTrue(String.valueOf(s.context()).startsWith("ctx-127.0.0.1:"), "handler context: " + s.context());
        assertEquals(s.peer(), String.valueOf(s.context()).substring(4));
        assertEquals(QpState.RTS, c.qp().state());
        // the QPs were made from each side's config
        FakeDisni.FQp hostQp = fake.qps.stream().filter(q -> q.num == c.qp().qpNum()).findFirst().orElseThrow();
        FakeDisni.FQp targetQp = fake.qps.stream().filter(q -> q.num == s.qp().qpNum()).findFirst().orElseThrow();
        assertEquals(40, hostQp.maxSendWr);
        assertEquals(9, hostQp.maxRecvWr);
        assertEquals(20, targetQp.maxSendWr);
        assertEquals(5, targetQp.maxRecvWr);
        assertTrue(fake.log.contains("connect retry=7 rnr=7"), fake.log.toString());
        // disconnect from the host: the target's handler hears it, its QP goes to error
        c.close();
        RcConnection gone = r.disconnected.poll(10, TimeUnit.SECONDS);
        assertSame(s, gone);
        assertEquals(QpState.ERROR, s.qp().state());
        assertEquals(QpState.CLOSED, c.qp().state());
        assertThrows(VerbsException.class, () -> c.qp().postSend(send(1)));
        l.close();
    }

    @Test
    void aRejectingHandlerFailsTheConnectWithItsMessage() throws Exception {
        target = device();
        host = device();
        Recorder r = new Recorder(target);
        r.reject = "bad connect private data (not a pistore host)";
        int port = rdmaPort();
        target.listen("127.0.0.1:" + port, r);
        VerbsException e = assertThrows(VerbsException.class, () -> host.connect("127.0.0.1:" + port,
                host.allocPd(), host.createCq(8), host.createCq(8), CFG, pdata(), 10_000));
        assertEquals(VerbsException.ECONNREFUSED, e.errno());
        assertTrue(e.getMessage().endsWith("rejected: bad connect private data (not a pistore host)"), e.getMessage());
        assertEquals(1, r.requests.size());
    }

    @Test
    void cmErrorsFailFastWithTheStepNamed() throws Exception {
        target = device();
        host = device();
        int port = rdmaPort();
        target.listen("127.0.0.1:" + port, new Recorder(target));
        String[][] cases = {{"ADDR", "ADDR_ERROR", "resolving the address"},
            {"ROUTE", "ROUTE_ERROR", "resolving the route"},
            {"CONNECT", "UNREACHABLE", "connecting"},
            {"CONNECT", "REJECTED", "connecting"}};
        for (String[] k : cases) {
            fake.script.clear();
            fake.script.put(k[0], CmEventType.valueOf(k[1]));
            int before = fake.destroyedIds.get();
            VerbsException e = assertThrows(VerbsException.class, () -> host.connect("127.0.0.1:" + port,
                    host.allocPd(), host.createCq(8), host.createCq(8), CFG, pdata(), 600_000));
            assertEquals(VerbsException.ECONNREFUSED, e.errno(), e.getMessage());
            assertEquals("disni: connect to 127.0.0.1:" + port + ": " + k[1] + " while " + k[2], e.getMessage());
            assertTrue(fake.destroyedIds.get() > before, "the failed id is destroyed");
        }
        fake.script.clear();
        // an address that no device serves
        VerbsException e = assertThrows(VerbsException.class, () -> host.connect("10.255.255.1:" + port,
                host.allocPd(), host.createCq(8), host.createCq(8), CFG, pdata(), 600_000));
        assertTrue(e.getMessage().contains("ADDR_ERROR while resolving the address"), e.getMessage());
    }

    @Test
    void aSilentStepEndsAtTheDeadline() throws Exception {
        host = device();
        for (String step : new String[] {"ADDR", "ROUTE"}) {
            fake.silent.clear();
            fake.silent.add(step);
            VerbsException e = assertThrows(VerbsException.class, () -> host.connect("127.0.0.1:4420",
                    host.allocPd(), host.createCq(8), host.createCq(8), CFG, pdata(), 200));
            assertEquals(VerbsException.ETIMEDOUT, e.errno());
            assertTrue(e.getMessage().contains("timed out after 200 ms while resolving the "
                    + (step.equals("ADDR") ? "address (no ADDR_RESOLVED)" : "route (no ROUTE_RESOLVED)")), e.getMessage());
        }
    }

    @Test
    void noControlListenerIsAOneLineRefusal() throws Exception {
        host = device();
        int port = rdmaPort();
        VerbsException e = assertThrows(VerbsException.class, () -> host.connect("127.0.0.1:" + port,
                host.allocPd(), host.createCq(8), host.createCq(8), CFG, pdata(), 5_000));
        assertEquals(VerbsException.ECONNREFUSED, e.errno());
        assertTrue(e.getMessage().contains("control connection to"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void aConnectRequestWithoutHelloIsRefused() throws Exception {
        target = device();
        Recorder r = new Recorder(target);
        int port = rdmaPort();
        target.listen("127.0.0.1:" + port, r);
        // drive the CM directly, skipping the hello
        DisniOps.Channel ch = fake.createEventChannel();
        DisniOps.Id id = fake.createId(ch);
        fake.resolveAddr(id, new InetSocketAddress("127.0.0.1", port), 100);
        fake.connect(id, 7, 7);
        DisniOps.CmEvent ev;
        do {
            ev = fake.getCmEvent(ch, 10_000);
            assertNotNull(ev);
        } while (ev.type() == CmEventType.ADDR_RESOLVED);
        assertEquals(CmEventType.REJECTED, ev.type());
        assertTrue(r.requests.isEmpty());
    }

    @Test
    void helloMatchingPrefersTheExactSourceThenASingleSameIp() throws Exception {
        target = device();
        Recorder r = new Recorder(target);
        DisniListener l = (DisniListener) target.listen("127.0.0.1:" + rdmaPort(), r);
        InetSocketAddress a = new InetSocketAddress("127.0.0.1", 5000);
        InetSocketAddress b = new InetSocketAddress("127.0.0.1", 5001);
        assertNull(l.offer(new ConnectHello.Hello(a, pdata())));
        assertNull(l.offer(new ConnectHello.Hello(b, pdata())));
        assertEquals(b, l.take(b).dataSource());
        assertEquals(a, l.take(new InetSocketAddress("127.0.0.1", 6000)).dataSource(), "the only one left from that IP");
        assertNull(l.take(a));
        assertNull(l.offer(new ConnectHello.Hello(a, pdata())));
        assertNull(l.offer(new ConnectHello.Hello(b, pdata())));
        assertNull(l.take(new InetSocketAddress("127.0.0.1", 6000)), "ambiguous: two from that IP");
        assertEquals(2, l.pendingCount());
        r.reject = "queue depth 0 is out of range";
        assertEquals("queue depth 0 is out of range", l.offer(new ConnectHello.Hello(a, pdata())));
    }

    private static SendWr send(long id) {
        SendWr w = new SendWr(4);
        w.wrId = id;
        w.signaled = true;
        w.addSge(0x1000, 64, 7);
        return w;
    }

    private DisniQp qp() throws Exception {
        FakeDisni.FQp f = (FakeDisni.FQp) fake.createQp(fake.createId(fake.createEventChannel()), new FakeDisni.FPd(),
                new FakeDisni.FCq(8), new FakeDisni.FCq(8), 16, 16, 0);
        return new DisniQp(fake, f, f.num);
    }

    private FakeDisni.FQp fq(DisniQp q) {
        return fake.qps.stream().filter(x -> x.num == q.qpNum()).findFirst().orElseThrow();
    }

    @Test
    void aRepeatedChainShapeIsPatchedNotSerialisedAgain() throws Exception {
        DisniQp q = qp();
        for (int i = 0; i < 3; i++) {
            SendWr rd = new SendWr(4);
            rd.opcode = WrOpcode.RDMA_READ;
            rd.wrId = 10 + i;
            rd.fence = i == 1;
            rd.remoteAddr = 0x9000 + i;
            rd.rkey = 0x55 + i;
            rd.addSge(0x2000 + i, 4096, 3).addSge(0x8000 + i, 8, 3);
            SendWr s = send(20 + i);
            s.signaled = i != 2;
            rd.next = s;
            q.postSend(rd);
        }
        assertEquals(1, fake.sendCalls.get(), "one serialisation for one shape");
        List<List<FakeDisni.Posted>> sent = fq(q).sends;
        assertEquals(3, sent.size());
        for (int i = 0; i < 3; i++) {
            FakeDisni.Posted rd = sent.get(i).get(0);
            FakeDisni.Posted s = sent.get(i).get(1);
            assertEquals(10 + i, rd.wrId());
            assertEquals(IbvSendWR.IBV_WR_RDMA_READ, rd.opcode());
            assertEquals(i == 1 ? IbvSendWR.IBV_SEND_FENCE : 0, rd.flags());
            assertEquals(0x9000 + i, rd.remoteAddr());
            assertEquals(0x55 + i, rd.rkey());
            assertEquals(2, rd.sges().size());
            assertArrayEquals(new long[] {0x2000 + i, 4096, 3}, rd.sges().get(0));
            assertArrayEquals(new long[] {0x8000 + i, 8, 3}, rd.sges().get(1));
            assertEquals(20 + i, s.wrId());
            assertEquals(IbvSendWR.IBV_WR_SEND, s.opcode());
            assertEquals(i != 2 ? IbvSendWR.IBV_SEND_SIGNALED : 0, s.flags());
        }
        // another shape: another serialisation; then the first shape is still cached
        SendWr w = new SendWr(4);
        w.opcode = WrOpcode.RDMA_WRITE;
        w.remoteAddr = 0x4000;
        w.rkey = 9;
        w.addSge(0x100, 512, 1);
        q.postSend(w);
        assertEquals(2, fake.sendCalls.get());
        assertEquals(IbvSendWR.IBV_WR_RDMA_WRITE, fq(q).sends.get(3).get(0).opcode());
        q.postSend(send(99));
        assertEquals(3, fake.sendCalls.get(), "a lone SEND is a shape of its own");
        q.postSend(send(100));
        assertEquals(3, fake.sendCalls.get());
        assertEquals(100, fq(q).sends.get(5).get(0).wrId());
    }

    @Test
    void whatDisniCannotPostIsRefusedBeforeAnythingIsPosted() throws Exception {
        DisniQp q = qp();
        for (WrOpcode op : new WrOpcode[] {WrOpcode.REG_MR_INTEGRITY, WrOpcode.LOCAL_INV, WrOpcode.SEND_WITH_INV}) {
            SendWr first = send(1);
            SendWr bad = new SendWr(1);
            bad.opcode = op;
            first.next = bad;
            VerbsException e = assertThrows(VerbsException.class, () -> q.postSend(first));
            assertEquals(VerbsException.EOPNOTSUPP, e.errno());
        }
        SendWr five = new SendWr(5);
        for (int i = 0; i < 5; i++) five.addSge(i, 1, 1);
        assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class, () -> q.postSend(five)).errno());
        assertEquals(0, fq(q).sends.size());
        assertEquals(0, fake.sendCalls.get());
    }

    @Test
    void chainsLongerThanTheCacheKeyArePostedUncached() throws Exception {
        DisniQp q = qp();
        SendWr head = send(0);
        SendWr t = head;
        for (int i = 1; i < DisniQp.MAX_CACHED_CHAIN + 2; i++) {
            t.next = send(i);
            t = t.next;
        }
        assertEquals(-1, DisniQp.shapeOf(head));
        q.postSend(head);
        q.postSend(head);
        assertEquals(2, fake.sendCalls.get());
        assertEquals(DisniQp.MAX_CACHED_CHAIN + 2, fq(q).sends.get(1).size());
    }

    @Test
    void shapesDifferByOpcodeAndSgeCount() throws Exception {
        SendWr a = send(1);
        SendWr b = send(1);
        b.addSge(0, 1, 1);
        SendWr c = send(1);
        c.opcode = WrOpcode.RDMA_WRITE;
        assertTrue(DisniQp.shapeOf(a) != DisniQp.shapeOf(b));
        assertTrue(DisniQp.shapeOf(a) != DisniQp.shapeOf(c));
        SendWr d = send(2);
        d.signaled = false;
        d.remoteAddr = 77;
        assertEquals(DisniQp.shapeOf(a), DisniQp.shapeOf(d), "ids, flags, addresses do not change the shape");
    }

    @Test
    void receivesAreCachedPerIdAndReserialisedWhenTheirBufferChanges() throws Exception {
        DisniQp q = qp();
        RecvWr r0 = new RecvWr(1);
        r0.wrId = 1L << 40;
        r0.addSge(0x3000, 256, 4);
        RecvWr r1 = new RecvWr(1);
        r1.wrId = (1L << 40) | 1;
        r1.addSge(0x3100, 256, 4);
        r0.next = r1;
        q.postRecv(r0);
        r0.next = null;
        q.postRecv(r0);
        q.postRecv(r1);
        assertEquals(2, fake.recvCalls.get(), "one serialisation per receive id");
        r1.sgl[0].addr = 0x5000;
        q.postRecv(r1);
        assertEquals(3, fake.recvCalls.get());
        List<List<FakeDisni.Posted>> posted = fq(q).recvs;
        assertEquals(5, posted.size());
        assertEquals((1L << 40) | 1, posted.get(4).get(0).wrId());
        assertArrayEquals(new long[] {0x5000, 256, 4}, posted.get(4).get(0).sges().get(0));
    }

    @Test
    void completionsMapAndNoneIsLostWhateverThePollSize() throws Exception {
        FakeDisni.FCq f = new FakeDisni.FCq(256);
        DisniCq cq = new DisniCq(fake, f);
        int n = DisniCq.BATCH * 2 + 5;
        for (int i = 0; i < n; i++) {
            f.complete(i, i == 3 ? 5 : 0, i % 2 == 0 ? 128 : 2, 100 + i, 77);
        }
        WorkCompletion[] one = {new WorkCompletion()};
        WorkCompletion[] many = new WorkCompletion[7];
        for (int i = 0; i < many.length; i++) many[i] = new WorkCompletion();
        int seen = 0;
        while (seen < n) {
            WorkCompletion[] out = seen % 2 == 0 ? one : many;
            int got = cq.poll(out);
            assertTrue(got > 0);
            for (int k = 0; k < got; k++, seen++) {
                WorkCompletion w = out[k];
                assertEquals(seen, w.wrId);
                assertEquals(seen == 3 ? WcStatus.WR_FLUSH_ERR : WcStatus.SUCCESS, w.status);
                if (seen != 3) {
                    assertEquals(seen % 2 == 0 ? WcOpcode.RECV : WcOpcode.RDMA_READ, w.opcode);
                }
                assertEquals(100 + seen, w.byteLen);
                assertEquals(77, w.qpNum);
            }
        }
        assertEquals(0, cq.poll(many));
        assertEquals(1, fake.pollCalls.get(), "one stateful poll call, reused");
        cq.close();
        assertTrue(f.destroyed);
    }

    @Test
    void awaitArmsTheCqAndWakesOnACompletion() throws Exception {
        FakeDisni.FCq f = new FakeDisni.FCq(16);
        DisniCq cq = new DisniCq(fake, f);
        assertFalse(cq.await(TimeUnit.MILLISECONDS.toNanos(60)), "nothing came");
        // the completion comes once the waiter armed the CQ: it is waiting for the event
        Thread t = new Thread(() -> {
            Eventually.await("the waiter to arm the CQ", () -> f.armed);
            f.complete(42, 0, 0, 8, 1);
        });
        t.start();
        assertTrue(cq.await(TimeUnit.SECONDS.toNanos(30)));
        WorkCompletion[] out = {new WorkCompletion()};
        assertEquals(1, cq.poll(out));
        assertEquals(42, out[0].wrId);
        assertEquals(WcOpcode.SEND, out[0].opcode);
        t.join();
        // a completion already there is seen without waiting for an event
        f.complete(43, 0, 1, 8, 1);
        assertTrue(cq.await(TimeUnit.SECONDS.toNanos(30)));
        // wakeup ends a wait
        cq.poll(out);
        Thread w = new Thread(() -> {
            Eventually.await("the waiter to arm the CQ", () -> f.armed);
            cq.wakeup();
        });
        w.start();
        assertFalse(cq.await(TimeUnit.SECONDS.toNanos(60)));
        w.join();
    }

    @Test
    void registrationsAndTheMissingIntegrityMr() throws Exception {
        host = device();
        ProtectionDomain pd = host.allocPd();
        ByteBuffer b = ByteBuffer.allocateDirect(8192);
        b.position(4096);
        MemoryRegion mr = pd.register(b, Access.REMOTE_WRITE);
        assertEquals(4096, mr.length());
        assertEquals(4096, mr.buffer().capacity(), "the registered range is [position, limit)");
        assertEquals(mr.iova() + 16, mr.addr(16));
        assertTrue(fake.log.contains("reg_mr len=4096 access=3"), "remote write implies local write: " + fake.log);
        assertEquals(DisniPd.IBV_ACCESS_REMOTE_READ, DisniPd.ibvAccess(Access.REMOTE_READ));
        assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class,
                () -> pd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE)).errno());
        VerbsException e = assertThrows(VerbsException.class, () -> pd.allocIntegrityMr(16, 16));
        assertEquals(VerbsException.EOPNOTSUPP, e.errno());
        assertTrue(e.getMessage().contains("no integrity MR"), e.getMessage());
        mr.close();
        mr.close();
        assertEquals(1, fake.deregistered.get());
        pd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
        pd.close();
        assertEquals(2, fake.deregistered.get(), "closing the PD deregisters what is left");
        QpConfig integrity = new QpConfig(8, 8, 1, 1, 7, true);
        assertEquals(VerbsException.EOPNOTSUPP, assertThrows(VerbsException.class, () -> host.connect("127.0.0.1:1",
                host.allocPd(), host.createCq(8), host.createCq(8), integrity, pdata(), 1000)).errno());
        QpConfig sges = new QpConfig(8, 8, 5, 1, 7, false);
        assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class, () -> host.connect("127.0.0.1:1",
                host.allocPd(), host.createCq(8), host.createCq(8), sges, pdata(), 1000)).errno());
    }

    @Test
    void openingWithoutAnRdmaAddressGivesOneLine() throws Exception {
        VerbsException e = assertThrows(VerbsException.class, () -> new DisniDevice(fake, null,
                List.of(InetAddress.getByName("10.1.2.3")), DisniVerbsProvider.caps(64)));
        assertEquals(VerbsException.ENODEV, e.errno());
        assertEquals("disni: no local address is bound to an RDMA device (tried 1); set rdma.disni.local=<ip of the"
                + " RDMA interface>", e.getMessage());
        VerbsException named = assertThrows(VerbsException.class, () -> new DisniDevice(fake, "10.1.2.3", List.of(),
                DisniVerbsProvider.caps(64)));
        assertEquals("disni: 10.1.2.3 is not the address of an RDMA device", named.getMessage());
        DisniDevice d = new DisniDevice(fake, null, List.of(InetAddress.getByName("10.1.2.3"),
                InetAddress.getByName("127.0.0.1")), DisniVerbsProvider.caps(64));
        assertEquals("127.0.0.1", d.localAddress());
        d.close();
    }

    @Test
    void ipv6AddressesAreRefusedInOneLine() throws Exception {
        for (String a : new String[] {"[::1]:4420", "[2001:db8::7]:4420", "::1:4420"}) {
            VerbsException e = assertThrows(VerbsException.class, () -> DisniAddress.parse(a));
            assertEquals(VerbsException.EINVAL, e.errno());
            assertEquals("disni: '" + a + "' is an IPv6 address; DiSNI 2.1 supports IPv4 only (give the device's"
                    + " IPv4 address)", e.getMessage());
        }
        assertEquals(4420, DisniAddress.parse("127.0.0.1:4420").getPort());
        VerbsException local = assertThrows(VerbsException.class, () -> new DisniDevice(new FakeDisni("127.0.0.1"), "::1",
                List.of(), DisniVerbsProvider.caps(64)));
        assertEquals(VerbsException.EINVAL, local.errno());
        assertEquals("disni: rdma.disni.local=::1 is an IPv6 address; DiSNI 2.1 supports IPv4 only",
                local.getMessage());
        // an IPv6 candidate is never tried: DiSNI would bind a wrong IPv4 address
        VerbsException none = assertThrows(VerbsException.class, () -> new DisniDevice(new FakeDisni("127.0.0.1"), null,
                List.of(InetAddress.getByName("::1")), DisniVerbsProvider.caps(64)));
        assertTrue(none.getMessage().contains("(tried 0)"), none.getMessage());
    }

    @Test
    void badAddressesAreOneLine() {
        for (String a : new String[] {"nohostport", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:70000"}) {
            VerbsException e = assertThrows(VerbsException.class, () -> DisniAddress.parse(a));
            assertEquals(VerbsException.EINVAL, e.errno());
            assertFalse(e.getMessage().contains("\n"));
        }
    }
}
