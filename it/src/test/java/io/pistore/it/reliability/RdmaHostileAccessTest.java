package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Hostile remote access on the soft RDMA provider: a peer that RDMA-READs or RDMA-WRITEs a host's
 * registered buffer outside its bounds (past the end, across the end, before the start, at an
 * offset whose end overflows a long) gets {@code REM_ACCESS_ERR}, and the host's memory is not
 * touched. Stale keys (an older registration's, a locally invalidated one), a key of another PD, and
 * re-registering an integrity MR before its status was checked are refused by the tests in
 * transport-rdma ({@code IntegrityMrModelTest}: keyRotatesOnEveryRegistrationAndOldKeysAreRefused,
 * aKeyIsRefusedAfterLocalInvalidateAndFromAnotherPd, registeringAgainBeforeTheStatusCheckIsRefused).
 */
class RdmaHostileAccessTest {
    static final int LEN = 4096;

    /** Two connected QPs on one soft device; the "target" side is the attacker. */
    static final class Pair implements AutoCloseable {
        final SoftDevice dev = new SoftDevice(true);
        final ProtectionDomain hostPd = dev.allocPd();
        final ProtectionDomain peerPd = dev.allocPd();
        final CompletionQueue hostCq;
        final CompletionQueue peerCq;
        final Listener listener;
        final RcConnection host;
        volatile RcConnection peer;

        Pair() throws Exception {
            hostCq = dev.createCq(64);
            peerCq = dev.createCq(64);
            QpConfig cfg = new QpConfig(64, 64, 4, 4, 7, true);
            listener = dev.listen("127.0.0.1:0", new ConnectHandler() {
                @Override
                public Accept onConnectRequest(String who, ByteBuffer pd) {
                    return new Accept(peerPd, peerCq, peerCq, cfg, null);
                }

                @Override
                public void onEstablished(RcConnection c) {
                    peer = c;
                }

                @Override
                public void onDisconnected(RcConnection c) {
                }
            });
            host = dev.connect(listener.address(), hostPd, hostCq, hostCq, cfg, ByteBuffer.allocate(0), 1000);
            Eventually.await("the passive side to establish", () -> peer != null);
        }

        WorkCompletion access(WrOpcode op, long remoteAddr, int len, int rkey) throws Exception {
            MemoryRegion local = peerPd.register(ByteBuffer.allocate(Math.max(len, 1)), Access.LOCAL_WRITE);
            SendWr w = new SendWr(1);
            w.opcode = op;
            w.signaled = true;
            w.addSge(local.iova(), len, local.lkey());
            w.remoteAddr = remoteAddr;
            w.rkey = rkey;
            peer.qp().postSend(w);
            WorkCompletion[] out = {new WorkCompletion()};
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < end) {
                peerCq.await(TimeUnit.MILLISECONDS.toNanos(100));
                if (peerCq.poll(out) == 1) {
                    return out[0];
                }
            }
            throw new AssertionError(op + " at 0x" + Long.toHexString(remoteAddr) + " len " + len
                    + ": no completion within 5 s (the soft NIC hung or died)");
        }

        @Override
        public void close() {
            host.close();
            if (peer != null) {
                peer.close();
            }
            listener.close();
            dev.close();
        }
    }

    @ParameterizedTest(name = "{0} at offset {1} for {2} bytes")
    @CsvSource({
        "RDMA_READ,  0,                   4096, SUCCESS",
        "RDMA_WRITE, 0,                   4096, SUCCESS",
        "RDMA_READ,  4096,                1,    REM_ACCESS_ERR",
        "RDMA_WRITE, 4096,                1,    REM_ACCESS_ERR",
        "RDMA_READ,  4000,                200,  REM_ACCESS_ERR",
        "RDMA_WRITE, 4000,                200,  REM_ACCESS_ERR",
        "RDMA_READ,  -1,                  16,   REM_ACCESS_ERR",
        "RDMA_WRITE, -1,                  16,   REM_ACCESS_ERR",
        "RDMA_READ,  9223372036854775797, 100,  REM_ACCESS_ERR",
        "RDMA_WRITE, 9223372036854775797, 100,  REM_ACCESS_ERR",
    })
    void outOfBoundsRemoteAccessIsRefusedAndTouchesNothing(WrOpcode op, long offset, int len, WcStatus want)
            throws Exception {
        try (Pair p = new Pair()) {
            byte[] before = new byte[LEN];
            Arrays.fill(before, (byte) 0x5A);
            ByteBuffer hostBuf = ByteBuffer.allocate(LEN);
            hostBuf.put(before).clear();
            MemoryRegion mr = p.hostPd.register(hostBuf, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            WorkCompletion wc = p.access(op, mr.iova() + offset, len, mr.rkey());
            assertEquals(want, wc.status, op + " offset " + offset + " len " + len);
            if (want != WcStatus.SUCCESS) {
                assertArrayEquals(before, Arrays.copyOf(hostBuf.array(), LEN), "host memory changed");
            }
        }
        // The device still serves a new connection.
        try (Pair p = new Pair()) {
            MemoryRegion mr = p.hostPd.register(ByteBuffer.allocate(LEN), Access.LOCAL_WRITE | Access.REMOTE_READ);
            assertEquals(WcStatus.SUCCESS, p.access(WrOpcode.RDMA_READ, mr.iova(), 64, mr.rkey()).status);
        }
    }
}
