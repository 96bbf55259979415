package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigErrorType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where a signature error is reported, per domain pairing. mlx5's {@code sig_err_offset} is the
 * failing block's byte offset in the interleaved stream of data and 8-byte tuples, and the kernel
 * (iSER initiator and target) divides it by interval + 8 whatever the wire carries; so the engine
 * reports block × (interval + 8) in every pairing, and the mapping divides by interval + 8. Block 5
 * of 12 fails (a guard flipped), on both engines, at 512 and 4096-byte intervals.
 */
class SignatureErrorOffsetTest {
    static final int N = 12;
    static final int BAD = 5;

    static SigAttrs attrs(boolean memDif, boolean wireDif, int interval) {
        SigAttrs a = new SigAttrs();
        if (memDif) {
            EngineHarness.dif(a.mem, interval, 0x1234, 100, true);
        }
        if (wireDif) {
            EngineHarness.dif(a.wire, interval, 0x1234, 100, true);
        }
        a.checkMask = 0xff;
        return a;
    }

    static void assertBlock(EngineHarness.Latched l, SigAttrs a, int interval) {
        assertTrue(l.hit, "no error latched");
        assertEquals(SigErrorType.BAD_GUARD, l.type);
        assertEquals(BAD * (long) (interval + 8), l.offset, "block x (interval + 8)");
        MrStatus st = new MrStatus();
        st.failed = true;
        st.errType = l.type;
        st.sigErrOffset = l.offset;
        assertEquals(BAD, SignatureMapping.toPiError(st, a).blockIndex());
    }

    @ParameterizedTest
    @ValueSource(ints = {512, 4096})
    void passWireToMemory(int interval) {
        SigAttrs a = attrs(true, true, interval);
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 1);
            w[BAD * (interval + 8) + interval] ^= 1;
            assertBlock(EngineHarness.wireToMemory(e, a, w, new byte[N * interval], new byte[N * 8]), a, interval);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {512, 4096})
    void passMemoryToWire(int interval) {
        SigAttrs a = attrs(true, true, interval);
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[][] dm = EngineHarness.split(EngineHarness.wire(a.mem, N, 2), interval);
            dm[1][BAD * 8] ^= 1;
            assertBlock(EngineHarness.memoryToWire(e, a, dm[0], dm[1], new byte[N * (interval + 8)]), a, interval);
        }
    }

    /** Host read strip: no PI in memory, PI on the wire (checked on the way in). */
    @ParameterizedTest
    @ValueSource(ints = {512, 4096})
    void stripIntoMemoryWithoutPi(int interval) {
        SigAttrs a = attrs(false, true, interval);
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 3);
            w[BAD * (interval + 8) + interval] ^= 1;
            assertBlock(EngineHarness.wireToMemory(e, a, w, new byte[N * interval], new byte[0]), a, interval);
        }
    }

    /** Target PRACT read: PI in memory (checked on the way out), none on the wire. */
    @ParameterizedTest
    @ValueSource(ints = {512, 4096})
    void stripOntoAWireWithoutPi(int interval) {
        SigAttrs a = attrs(true, false, interval);
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[][] dm = EngineHarness.split(EngineHarness.wire(a.mem, N, 4), interval);
            dm[1][BAD * 8] ^= 1;
            assertBlock(EngineHarness.memoryToWire(e, a, dm[0], dm[1], new byte[N * interval]), a, interval);
        }
    }
}
