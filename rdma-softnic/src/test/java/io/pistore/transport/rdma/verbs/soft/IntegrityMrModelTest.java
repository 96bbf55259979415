package io.pistore.transport.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Protection;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigErrorType;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The integrity MR model on its own, against the kernel's rules (ib_alloc_mr_integrity, ib_map_mr_sg_pi, REG_MR_INTEGRITY, ib_check_mr_status). */
class IntegrityMrModelTest {
    static final BlockFormat F = BlockFormat.of(512, 8);
    static final int N = 8;
    static final long REF = 100;
    static final int APP = 0x1234;

    @AfterEach
    void untap() {
        SoftFabric.setWireTap(null);
    }

    static ScatterList list(byte[] a, int pieces) {
        ByteBuffer[] b = new ByteBuffer[pieces];
        int step = a.length / pieces;
        for (int i = 0; i < pieces; i++) {
            b[i] = ByteBuffer.wrap(a, i * step, i == pieces - 1 ? a.length - i * step : step);
        }
        return ScatterList.of(b);
    }

    static SendWr reg(IntegrityMr mr, int access) {
        SendWr w = new SendWr(1);
        w.opcode = WrOpcode.REG_MR_INTEGRITY;
        w.mr = mr;
        w.key = mr.nextKey();
        w.access = access;
        return w;
    }

    static final int REMOTE = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    // ------------------------------------------------------------------ allocation and mapping

    @Test
    void allocationNeedsMetaSgAndTheCapability() throws Exception {
        SoftDevice dev = new SoftDevice(true);
        var pd = dev.allocPd();
        VerbsException e = assertThrows(VerbsException.class, () -> pd.allocIntegrityMr(4, 0));
        assertEquals(VerbsException.EINVAL, e.errno());
        assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class,
                () -> pd.allocIntegrityMr(SoftDevice.MAX_PI_PAGE_LIST + 1, 4)).errno());
        var noPi = new SoftDevice(false).allocPd();
        assertEquals(VerbsException.EOPNOTSUPP, assertThrows(VerbsException.class,
                () -> noPi.allocIntegrityMr(4, 4)).errno());
    }

    @Test
    void mappingIsZeroBasedDataThenMetadataWithinTheLimits() throws Exception {
        var pd = new SoftDevice(true).allocPd();
        IntegrityMr mr = pd.allocIntegrityMr(4, 2);
        byte[] d = new byte[N * 512];
        byte[] m = new byte[N * 8];
        mr.map(list(d, 4), list(m, 2), 4096);
        assertEquals(0, mr.iova());
        assertEquals(N * 520L, mr.length(), "length = data + metadata as laid out in memory");
        assertEquals(N * 8L, mr.metaLength());
        assertEquals(N * 8, mr.sigAttrs().metaLength, "meta_length is recorded in the attributes");
        assertEquals(VerbsException.ENOMEM, assertThrows(VerbsException.class,
                () -> mr.map(list(d, 5), list(m, 1), 4096)).errno());
        assertEquals(VerbsException.ENOMEM, assertThrows(VerbsException.class,
                () -> mr.map(list(d, 1), list(m, 3), 4096)).errno());
        assertThrows(VerbsException.class, () -> mr.map(list(d, 1), list(m, 1), 1000));
        mr.map(list(d, 1), ScatterList.of(), 4096);
        assertEquals(N * 512L, mr.length(), "PRACT: no metadata mapped");
        assertEquals(0, mr.sigAttrs().metaLength);
    }

    @Test
    void wireLengthPerDomainCombination() throws Exception {
        SigAttrs a = new SigAttrs();
        long data = N * 512L;
        Protection pass = Protection.pass(CheckFlags.ALL, REF, APP, 0xFFFF);
        SignatureMapping.setHostAttrs(a, F, true, pass, true); // DIF | DIF
        assertEquals(N * 520L, a.wireLength(data));
        SignatureMapping.setHostAttrs(a, F, true, Protection.insertStrip(REF), false); // NONE | DIF (host insert)
        assertFalse(a.mem.isDif());
        assertEquals(N * 520L, a.wireLength(data), "the wire length comes from the wire domain, not mr.length");
        SignatureMapping.setTargetAttrs(a, F, true, Protection.insertStrip(REF)); // DIF | NONE (target insert)
        assertFalse(a.wire.isDif());
        assertEquals(data, a.wireLength(data));
        a.clear(); // NONE | NONE
        assertEquals(data, a.wireLength(data));
    }

    // ------------------------------------------------------------------ keys and status

    @Test
    void keyRotatesOnEveryRegistrationAndOldKeysAreRefused() throws Exception {
        try (Pair p = new Pair()) {
            IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
            byte[] d = new byte[N * 512];
            mr.map(list(d, 1), ScatterList.of(), 4096);
            SignatureMapping.setHostAttrs(mr.sigAttrs(), F, true, Protection.insertStrip(REF), false);
            int k0 = mr.rkey();
            p.hq().postSend(reg(mr, REMOTE));
            int k1 = mr.rkey();
            assertNotEquals(k0, k1);
            assertEquals(k0 >>> 8, k1 >>> 8, "same MR index, next variant (ib_inc_rkey)");
            mr.checkStatus(new MrStatus());
            p.hq().postSend(reg(mr, REMOTE));
            int k2 = mr.rkey();
            assertNotEquals(k1, k2);
            // The target reads with the key of the older registration: refused.
            assertEquals(WcStatus.REM_ACCESS_ERR, targetRead(p, k1, N * 520).status);
            assertEquals(QpState.ERROR, p.tq().state(), "a remote access error moves the QP to error");
        }
    }

    @Test
    void registeringAgainBeforeTheStatusCheckIsRefused() throws Exception {
        try (Pair p = new Pair()) {
            IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
            mr.map(list(new byte[N * 512], 1), ScatterList.of(), 4096);
            SignatureMapping.setHostAttrs(mr.sigAttrs(), F, true, Protection.insertStrip(REF), false);
            p.hq().postSend(reg(mr, REMOTE));
            VerbsException e = assertThrows(VerbsException.class, () -> p.hq().postSend(reg(mr, REMOTE)));
            assertEquals(VerbsException.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("before ib_check_mr_status"), e.getMessage());
            assertFalse(mr.checkStatus(new MrStatus()).failed);
            p.hq().postSend(reg(mr, REMOTE)); // now allowed
        }
    }

    @Test
    void registrationNeedsAnIntegrityQpAndValidAttributes() throws Exception {
        try (Pair p = new Pair(new QpConfig(8, 8, 1, 1, 7, false), Pair.cfg())) {
            IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
            mr.map(list(new byte[N * 512], 1), ScatterList.of(), 4096);
            SignatureMapping.setHostAttrs(mr.sigAttrs(), F, true, Protection.insertStrip(REF), false);
            assertThrows(VerbsException.class, () -> p.hq().postSend(reg(mr, REMOTE)),
                    "REG_MR_INTEGRITY needs IB_QP_CREATE_INTEGRITY_EN");
        }
        try (Pair p = new Pair()) {
            IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
            mr.map(list(new byte[N * 512], 1), list(new byte[N * 8 - 8], 1), 4096);
            SignatureMapping.setHostAttrs(mr.sigAttrs(), F, true, Protection.pass(CheckFlags.ALL, REF, 0, 0), true);
            VerbsException e = assertThrows(VerbsException.class, () -> p.hq().postSend(reg(mr, REMOTE)));
            assertTrue(e.getMessage().contains("metadata"), e.getMessage());
            mr.map(list(new byte[N * 512], 1), list(new byte[N * 8], 1), 4096);
            mr.sigAttrs().mem.piInterval = 1024;
            mr.sigAttrs().wire.piInterval = 1024;
            assertThrows(VerbsException.class, () -> p.hq().postSend(reg(mr, REMOTE)),
                    "interval 1024 unsupported (no bs_selector; 520 and 4160 are, Mlx5RulesTest)");
        }
    }

    @Test
    void aKeyIsRefusedAfterLocalInvalidateAndFromAnotherPd() throws Exception {
        try (Pair p = new Pair()) {
            IntegrityMr mr = hostWriteMr(p, new byte[N * 512], null, Protection.insertStrip(REF));
            int key = mr.rkey();
            SendWr inv = new SendWr(1);
            inv.opcode = WrOpcode.LOCAL_INV;
            inv.invalidateKey = key;
            p.hq().postSend(inv);
            assertEquals(WcStatus.REM_ACCESS_ERR, targetRead(p, key, N * 520).status);
            // Later work on the errored QP is flushed.
            List<WorkCompletion> more = postTargetRead(p, key, N * 520);
            assertEquals(WcStatus.WR_FLUSH_ERR, more.get(0).status);
        }
        try (Pair p = new Pair()) {
            // A valid key of the target's own PD is unknown to the host's PD.
            var own = p.targetPd.register(ByteBuffer.allocate(4096), REMOTE);
            assertEquals(WcStatus.REM_ACCESS_ERR, targetRead(p, own.rkey(), 64).status);
        }
    }

    @Test
    void aStatusCheckThatFailsMapsToInvalidProtectionInformation() throws Exception {
        try (Pair p = new Pair()) {
            IntegrityMr mr = hostWriteMr(p, new byte[N * 512], null, Protection.insertStrip(REF));
            mr.close(); // deregistered with a registration outstanding: ib_check_mr_status fails
            MrStatus st = mr.checkStatus(new MrStatus());
            assertEquals(VerbsException.EINVAL, st.errno);
            assertFalse(st.failed);
            io.pistore.spi.Completion c = SignatureMapping.toCompletion(st, mr.sigAttrs(), 40);
            assertEquals(io.pistore.spi.Status.INVALID_FIELD, c.status(), c.toString());
            assertTrue(c.message().startsWith("invalid protection information"), c.message());
        }
    }

    // ------------------------------------------------------------------ the signature engine

    /** Data with PI generated by the integrity library. */
    static byte[][] protectedBlocks(BlockFormat f, long seed) {
        Random r = new Random(seed);
        byte[] d = new byte[N * f.dataSize()];
        r.nextBytes(d);
        byte[] m = new byte[N * f.metadataSize()];
        PiContext ctx = PiContext.builder(f).initialRefTag(REF).appTag(APP).build();
        Pi.generate(ctx, ScatterList.wrap(d), ScatterList.wrap(m), N);
        return new byte[][] {d, m};
    }

    /** The host's MR for a write (registered, keyed for remote read). */
    static IntegrityMr hostWriteMr(Pair p, byte[] d, byte[] m, Protection prot) throws VerbsException {
        IntegrityMr mr = p.hostPd.allocIntegrityMr(4, 4);
        mr.map(list(d, 3), m == null ? ScatterList.of() : list(m, 2), 4096);
        SignatureMapping.setHostAttrs(mr.sigAttrs(), F, true, prot, m != null);
        mr.sigAttrs().checkMask = 0; // only the target checks in these tests
        p.hq().postSend(reg(mr, REMOTE));
        return mr;
    }

    static WorkCompletion targetRead(Pair p, int rkey, int len) throws Exception {
        List<WorkCompletion> l = postTargetRead(p, rkey, len);
        return l.get(l.size() - 1);
    }

    static List<WorkCompletion> postTargetRead(Pair p, int rkey, int len) throws Exception {
        var buf = p.targetPd.register(ByteBuffer.allocate(len), Access.LOCAL_WRITE);
        SendWr rd = new SendWr(1);
        rd.opcode = WrOpcode.RDMA_READ;
        rd.signaled = true;
        rd.addSge(buf.iova(), len, buf.lkey());
        rd.remoteAddr = 0;
        rd.rkey = rkey;
        p.tq().postSend(rd);
        return Pair.await(p.targetCq);
    }

    /** The target pulls the host's blocks through its own integrity MR; returns its status. */
    static MrStatus targetPull(Pair p, IntegrityMr hostMr, byte[] td, byte[] tm, Protection targetProt)
            throws Exception {
        IntegrityMr t = p.targetPd.allocIntegrityMr(4, 4);
        t.map(list(td, 2), list(tm, 1), 4096);
        SignatureMapping.setTargetAttrs(t.sigAttrs(), F, true, targetProt);
        SendWr reg = reg(t, Access.LOCAL_WRITE);
        SendWr rd = new SendWr(1);
        rd.opcode = WrOpcode.RDMA_READ;
        rd.signaled = true;
        rd.addSge(0, (int) t.sigAttrs().wireLength(t.dataLength()), reg.key);
        rd.rkey = hostMr.rkey();
        reg.next = rd;
        p.tq().postSend(reg);
        List<WorkCompletion> wc = Pair.await(p.targetCq);
        assertEquals(1, wc.size(), "the unsignalled registration completes silently");
        assertEquals(WcStatus.SUCCESS, wc.get(0).status, "the transfer succeeds even when a check fails");
        assertEquals(WcOpcode.RDMA_READ, wc.get(0).opcode);
        assertEquals(N * 520, wc.get(0).byteLen);
        lastTargetAttrs = t.sigAttrs();
        return t.checkStatus(new MrStatus());
    }

    static SigAttrs lastTargetAttrs;

    @Test
    void passThroughCopiesDataAndPiAndFindsNothing() throws Exception {
        byte[][] dm = protectedBlocks(F, 1);
        try (Pair p = new Pair()) {
            Protection pass = Protection.pass(CheckFlags.ALL, REF, APP, 0xFFFF);
            IntegrityMr h = hostWriteMr(p, dm[0], dm[1], pass);
            byte[] td = new byte[dm[0].length];
            byte[] tm = new byte[dm[1].length];
            assertFalse(targetPull(p, h, td, tm, pass).failed);
            assertArrayEquals(dm[0], td);
            assertArrayEquals(dm[1], tm);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"GUARD", "APP", "REF", "DATA"})
    void eachSignatureErrorIsLatchedAtItsWireOffset(String field) throws Exception {
        byte[][] dm = protectedBlocks(F, 2);
        int block = 5;
        int wb = 512 + 8;
        int at = block * wb + switch (field) {
            case "GUARD" -> 512 + 1;
            case "APP" -> 512 + 3;
            case "REF" -> 512 + 7;
            default -> 17;
        };
        SoftFabric.setWireTap((op, buf, len) -> buf[at] ^= 0x04);
        try (Pair p = new Pair()) {
            Protection pass = Protection.pass(CheckFlags.ALL, REF, APP, 0xFFFF);
            IntegrityMr h = hostWriteMr(p, dm[0], dm[1], pass);
            byte[] td = new byte[dm[0].length];
            byte[] tm = new byte[dm[1].length];
            MrStatus st = targetPull(p, h, td, tm, pass);
            assertTrue(st.failed, field);
            assertEquals(block * (long) wb, st.sigErrOffset, "offset of the failing block in the wire stream");
            PiError e = SignatureMapping.toPiError(st, lastTargetAttrs);
            assertEquals(block, e.blockIndex(), "LBA offset = wire offset / (interval + 8)");
            long guard = GuardType.CRC16.compute(dm[0], block * 512, 512);
            switch (field) {
                case "GUARD" -> {
                    assertEquals(SigErrorType.BAD_GUARD, st.errType);
                    assertEquals(guard, st.expected);
                    assertEquals(guard ^ 0x04, st.actual);
                }
                case "DATA" -> {
                    assertEquals(SigErrorType.BAD_GUARD, st.errType);
                    assertEquals(guard, st.actual, "the stored guard");
                    assertNotEquals(guard, st.expected, "the guard of the corrupted data");
                }
                case "APP" -> {
                    assertEquals(SigErrorType.BAD_APPTAG, st.errType);
                    assertEquals(PiErrorKind.APP_TAG, e.kind());
                    assertEquals(APP, st.expected);
                    assertEquals(APP ^ 0x04, st.actual);
                }
                default -> {
                    assertEquals(SigErrorType.BAD_REFTAG, st.errType);
                    assertEquals(PiErrorKind.REF_TAG, e.kind());
                    assertEquals(REF + block, st.expected);
                    assertEquals((REF + block) ^ 0x04, st.actual);
                }
            }
            assertEquals(e.kind(), io.pistore.spi.Completion.piError(1000, e).piError().kind());
            assertEquals(1000 + block, SignatureMapping.toCompletion(st, lastTargetAttrs, 1000).errorLba());
            assertFalse(new MrStatus().failed);
        }
    }

    @Test
    void theStatusIsClearedByTheCheckAndEscapesAreHonoured() throws Exception {
        byte[][] dm = protectedBlocks(F, 3);
        // Block 2 escaped (app 0xFFFF): its corrupt guard is not checked.
        dm[1][2 * 8 + 2] = (byte) 0xFF;
        dm[1][2 * 8 + 3] = (byte) 0xFF;
        dm[1][2 * 8] ^= 1;
        try (Pair p = new Pair()) {
            Protection pass = Protection.pass(CheckFlags.ALL, REF, APP, 0xFFFF);
            IntegrityMr h = hostWriteMr(p, dm[0], dm[1], pass);
            assertFalse(targetPull(p, h, new byte[dm[0].length], new byte[dm[1].length], pass).failed);
        }
    }

    @Test
    void hostInsertMatchesTheIntegrityLibrary() throws Exception {
        byte[] d = protectedBlocks(F, 4)[0];
        try (Pair p = new Pair()) {
            Protection ins = Protection.insertStrip(REF);
            IntegrityMr h = hostWriteMr(p, d, null, ins);
            byte[] td = new byte[d.length];
            byte[] tm = new byte[N * 8];
            // The host cleared PRACT: the target sees a pass request.
            assertFalse(targetPull(p, h, td, tm, Protection.pass(CheckFlags.ALL, REF, 0, 0)).failed);
            byte[] want = new byte[N * 8];
            Pi.generate(PiContext.builder(F).initialRefTag(REF).appTag(0).build(), ScatterList.wrap(d),
                    ScatterList.wrap(want), N);
            assertArrayEquals(want, tm);
            assertArrayEquals(d, td);
        }
    }

    @Test
    void targetStripsOnAReadAndTheHostsMrChecks() throws Exception {
        byte[][] dm = protectedBlocks(F, 5);
        dm[1][6 * 8 + 5] ^= 0x10; // block 6's ref tag is wrong in the target's memory
        try (Pair p = new Pair()) {
            // Host read without metadata: mem NONE, wire DIF (strip), checks guard and ref.
            IntegrityMr h = p.hostPd.allocIntegrityMr(4, 4);
            byte[] hd = new byte[dm[0].length];
            h.map(list(hd, 2), ScatterList.of(), 4096);
            SignatureMapping.setHostAttrs(h.sigAttrs(), F, false, Protection.insertStrip(REF), false);
            p.hq().postSend(reg(h, REMOTE));
            // Target pushes with RDMA WRITE through its MR; it does not check (mask 0) here.
            IntegrityMr t = p.targetPd.allocIntegrityMr(4, 4);
            t.map(list(dm[0], 1), list(dm[1], 1), 4096);
            SignatureMapping.setTargetAttrs(t.sigAttrs(), F, false, Protection.pass(CheckFlags.NONE, REF, 0, 0));
            SendWr reg = reg(t, Access.LOCAL_WRITE);
            SendWr wr = new SendWr(1);
            wr.opcode = WrOpcode.RDMA_WRITE;
            wr.signaled = true;
            wr.addSge(0, N * 520, reg.key);
            wr.rkey = h.rkey();
            reg.next = wr;
            p.tq().postSend(reg);
            assertEquals(WcStatus.SUCCESS, Pair.await(p.targetCq).get(0).status);
            assertArrayEquals(dm[0], hd, "data arrives, PI stripped");
            MrStatus st = h.checkStatus(new MrStatus());
            assertEquals(SigErrorType.BAD_REFTAG, st.errType);
            assertEquals(6 * 520L, st.sigErrOffset);
            assertFalse(h.checkStatus(new MrStatus()).failed, "reading the status clears it");
        }
    }

    @Test
    void guardIsConvertedBetweenIpChecksumInMemoryAndCrcOnTheWire() throws Exception {
        BlockFormat ip = F.withGuard(GuardType.IP_CHECKSUM);
        byte[][] dm = protectedBlocks(ip, 6);
        int[] wireGuard = new int[1];
        SoftFabric.setWireTap((op, buf, len) -> wireGuard[0] = ((buf[512] & 0xFF) << 8) | (buf[513] & 0xFF));
        try (Pair p = new Pair()) {
            Protection pass = Protection.pass(CheckFlags.ALL, REF, APP, 0xFFFF);
            IntegrityMr h = p.hostPd.allocIntegrityMr(4, 4);
            h.map(list(dm[0], 1), list(dm[1], 1), 4096);
            SignatureMapping.setHostAttrs(h.sigAttrs(), ip, true, pass, true);
            h.sigAttrs().wire.bgType = DifGuard.CRC; // iSER style: IP checksum in memory, CRC on the wire
            p.hq().postSend(reg(h, REMOTE));
            IntegrityMr t = p.targetPd.allocIntegrityMr(4, 4);
            byte[] td = new byte[dm[0].length];
            byte[] tm = new byte[dm[1].length];
            t.map(list(td, 1), list(tm, 1), 4096);
            SignatureMapping.setTargetAttrs(t.sigAttrs(), ip, true, pass);
            t.sigAttrs().wire.bgType = DifGuard.CRC;
            SendWr reg = reg(t, Access.LOCAL_WRITE);
            SendWr rd = new SendWr(1);
            rd.opcode = WrOpcode.RDMA_READ;
            rd.signaled = true;
            rd.addSge(0, N * 520, reg.key);
            rd.rkey = h.rkey();
            reg.next = rd;
            p.tq().postSend(reg);
            Pair.await(p.targetCq);
            assertEquals(GuardType.CRC16.compute(dm[0], 0, 512), wireGuard[0], "the wire carries CRC-16");
            assertFalse(h.checkStatus(new MrStatus()).failed);
            assertFalse(t.checkStatus(new MrStatus()).failed);
            assertArrayEquals(dm[1], tm, "converted back to the IP checksum in the target's memory");
        }
    }
}
