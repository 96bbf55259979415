package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.ScatterList;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigDomain;
import io.pistore.transport.rdma.verbs.SigErrorType;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WrOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * mlx5's signature rules, each pinned on its own (pi-anchors.md §1.1, §1.5), on both engines: the
 * syndrome priority, the two escape modes, the app-tag mask and raw app tags in the error, the copy
 * mask for fields equal in both domains, and the intervals {@code bs_selector} knows.
 */
class Mlx5RulesTest {
    static final int I = 512;
    static final int WB = I + 8;
    static final int N = 8;

    /** Pass attributes (both domains the same) with all checks; the wire stream is correct. */
    static SigAttrs pass() {
        SigAttrs a = new SigAttrs();
        EngineHarness.dif(a.wire, I, 0x1234, 100, true);
        EngineHarness.dif(a.mem, I, 0x1234, 100, true);
        a.checkMask = 0xff;
        return a;
    }

    static EngineHarness.Latched in(SignatureEngine e, SigAttrs a, byte[] w) {
        return EngineHarness.wireToMemory(e, a, w, new byte[N * I], new byte[N * 8]);
    }

    @Test
    void aBlockWithBadGuardAndBadRefReportsBadGuard() {
        SigAttrs a = pass();
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 1);
            w[3 * WB + I] ^= 1; // guard
            w[3 * WB + I + 7] ^= 1; // ref
            EngineHarness.Latched l = in(e, a, w);
            assertEquals(SigErrorType.BAD_GUARD, l.type, "GUARD > REFTAG > APPTAG");
            assertEquals(3L * WB, l.offset);
            byte[] w2 = EngineHarness.wire(a.wire, N, 1);
            w2[3 * WB + I + 3] ^= 1; // app
            w2[3 * WB + I + 7] ^= 1; // ref
            assertEquals(SigErrorType.BAD_REFTAG, in(e, a, w2).type, "ref before app");
        }
    }

    @Test
    void type3EscapeNeedsAppFfffAndRefAllOnes() {
        SigAttrs a = pass();
        for (SigDomain d : new SigDomain[] {a.wire, a.mem}) {
            d.refEscape = true; // APPREF_ESCAPE
            d.refRemap = false;
        }
        a.checkMask = SigAttrs.CHECK_GUARD | SigAttrs.CHECK_APPTAG;
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 2);
            EngineHarness.tuple(w, 2 * WB + I, 0xBAD, 0xFFFF, 0xFFFFFFFFL);
            assertFalse(in(e, a, w).hit, "app 0xFFFF and ref all-ones: the block is not checked");
            byte[] w2 = EngineHarness.wire(a.wire, N, 2);
            EngineHarness.tuple(w2, 2 * WB + I, 0xBAD, 0xFFFF, 0xFFFFFFFEL);
            EngineHarness.Latched l = in(e, a, w2);
            assertEquals(SigErrorType.BAD_GUARD, l.type, "app 0xFFFF alone does not escape under Type 3");
            assertEquals(2L * WB, l.offset);
        }
    }

    @Test
    void appEscapeAloneSkipsTheBlockAndRefEscapeWithoutAppEscapeIsIgnored() {
        SigAttrs a = pass();
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 3);
            EngineHarness.tuple(w, 4 * WB + I, 0xBAD, 0xFFFF, 7);
            assertFalse(in(e, a, w).hit, "APPTAG_ESCAPE: app 0xFFFF skips the block (Types 1/2)");
        }
        for (SigDomain d : new SigDomain[] {a.wire, a.mem}) {
            d.appEscape = false;
            d.refEscape = true; // mlx5_fill_inl_bsf: no escape mode at all without app_escape
        }
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 3);
            EngineHarness.tuple(w, 4 * WB + I, 0xBAD, 0xFFFF, 0xFFFFFFFFL);
            EngineHarness.Latched l = in(e, a, w);
            assertEquals(SigErrorType.BAD_GUARD, l.type, "ref_escape without app_escape escapes nothing");
            assertEquals(4L * WB, l.offset);
        }
    }

    @Test
    void appMaskFf00ChecksTheHighByteAndErrorsCarryTheRawTags() {
        SigAttrs a = pass();
        for (SigDomain d : new SigDomain[] {a.wire, a.mem}) {
            d.appTag = 0x12AB;
            d.apptagCheckMask = 0xFF00;
        }
        for (SignatureEngine e : EngineHarness.ENGINES) {
            byte[] w = EngineHarness.wire(a.wire, N, 4);
            int g = EngineHarness.guard(DifGuard.CRC, w, WB, I);
            EngineHarness.tuple(w, WB + I, g, 0x12CD, 101);
            assertFalse(in(e, a, w).hit, "the low byte is not checked");
            EngineHarness.tuple(w, WB + I, g, 0x13AB, 101);
            EngineHarness.Latched l = in(e, a, w);
            assertEquals(SigErrorType.BAD_APPTAG, l.type);
            assertEquals(0x12AB, l.expected, "raw, not masked (0x1200)");
            assertEquals(0x13AB, l.actual, "raw, not masked (0x1300)");
            assertEquals(1L * WB, l.offset);
        }
    }

    @Test
    void fieldsEqualInBothDomainsAreCopiedOthersRegenerated() {
        for (SignatureEngine e : EngineHarness.ENGINES) {
            // Unchecked fields that disagree with the domain: copied as they are when both domains agree.
            SigAttrs a = pass();
            a.checkMask = 0;
            byte[] w = EngineHarness.wire(a.wire, N, 5);
            EngineHarness.tuple(w, 0 * WB + I, 0x0BAD, 0x7777, 0x55555555L);
            byte[] data = new byte[N * I];
            byte[] meta = new byte[N * 8];
            assertFalse(EngineHarness.wireToMemory(e, a, w, data, meta).hit);
            assertArrayEquals(EngineHarness.split(w, I)[1], meta, "guard, app and ref copied (copy mask)");

            // Different app tag and ref tag, IP checksum in memory: each such field is regenerated.
            SigAttrs b = pass();
            b.checkMask = 0;
            b.mem.appTag = 0x4321;
            b.mem.refTag = 900;
            b.mem.bgType = DifGuard.CSUM;
            byte[] meta2 = new byte[N * 8];
            assertFalse(EngineHarness.wireToMemory(e, b, w, new byte[N * I], meta2).hit);
            for (int k = 0; k < N; k++) {
                assertEquals(EngineHarness.guard(DifGuard.CSUM, w, k * WB, I), EngineHarness.u16(meta2, k * 8),
                        "guard regenerated as IP checksum, block " + k);
                assertEquals(0x4321, EngineHarness.u16(meta2, k * 8 + 2), "app tag regenerated");
                assertEquals(900 + k, EngineHarness.u32(meta2, k * 8 + 4), "ref tag remapped");
            }

            // Only the app tag differs: guard and ref (bad ones included) are copied, the app tag is not.
            SigAttrs c = pass();
            c.checkMask = 0;
            c.mem.appTag = 0x4321;
            byte[] meta3 = new byte[N * 8];
            EngineHarness.wireToMemory(e, c, w, new byte[N * I], meta3);
            assertEquals(0x0BAD, EngineHarness.u16(meta3, 0));
            assertEquals(0x4321, EngineHarness.u16(meta3, 2));
            assertEquals(0x55555555L, EngineHarness.u32(meta3, 4));
        }
    }

    /** bs_selector: 512 → 1, 520 → 2, 4096 → 3, 4160 → 4, anything else unsupported. */
    @ParameterizedTest
    @ValueSource(ints = {520, 4160})
    void intervals520And4160AreRegisteredAndChecked(int interval) throws Exception {
        int n = 4;
        int wb = interval + 8;
        try (Pair p = new Pair()) {
            SigAttrs src = new SigAttrs();
            EngineHarness.dif(src.wire, interval, 0x1234, 100, true);
            byte[][] dm = EngineHarness.split(EngineHarness.wire(src.wire, n, 6), interval);
            dm[1][2 * 8] ^= 1; // block 2's guard
            IntegrityMr h = p.hostPd.allocIntegrityMr(4, 4);
            h.map(ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), 4096);
            EngineHarness.dif(h.sigAttrs().mem, interval, 0x1234, 100, true);
            EngineHarness.dif(h.sigAttrs().wire, interval, 0x1234, 100, true);
            p.hq().postSend(IntegrityMrModelTest.reg(h, IntegrityMrModelTest.REMOTE));
            IntegrityMr t = p.targetPd.allocIntegrityMr(4, 4);
            byte[] td = new byte[n * interval];
            byte[] tm = new byte[n * 8];
            t.map(ScatterList.wrap(td), ScatterList.wrap(tm), 4096);
            EngineHarness.dif(t.sigAttrs().mem, interval, 0x1234, 100, true);
            EngineHarness.dif(t.sigAttrs().wire, interval, 0x1234, 100, true);
            t.sigAttrs().checkMask = 0xff;
            SendWr reg = IntegrityMrModelTest.reg(t, Access.LOCAL_WRITE);
            SendWr rd = new SendWr(1);
            rd.opcode = WrOpcode.RDMA_READ;
            rd.signaled = true;
            rd.addSge(0, n * wb, reg.key);
            rd.rkey = h.rkey();
            reg.next = rd;
            p.tq().postSend(reg);
            assertEquals(WcStatus.SUCCESS, Pair.await(p.targetCq).get(0).status);
            assertArrayEquals(dm[0], td);
            assertArrayEquals(dm[1], tm, "the tuples pass through (copied)");
            MrStatus st = t.checkStatus(new MrStatus());
            assertTrue(st.failed);
            assertEquals(SigErrorType.BAD_GUARD, st.errType);
            assertEquals(2L * wb, st.sigErrOffset);
        }
    }

    @Test
    void anIntervalWithoutABsSelectorIsRefusedAtPost() throws Exception {
        try (Pair p = new Pair()) {
            IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
            mr.map(ScatterList.wrap(new byte[4 * 1024]), ScatterList.wrap(new byte[32]), 4096);
            EngineHarness.dif(mr.sigAttrs().mem, 1024, 0, 0, true);
            EngineHarness.dif(mr.sigAttrs().wire, 1024, 0, 0, true);
            VerbsException ex = assertThrows(VerbsException.class,
                    () -> p.hq().postSend(IntegrityMrModelTest.reg(mr, IntegrityMrModelTest.REMOTE)));
            assertEquals(VerbsException.EINVAL, ex.errno());
            assertTrue(ex.getMessage().contains("protection interval 1024 is not supported"), ex.getMessage());
        }
    }
}
