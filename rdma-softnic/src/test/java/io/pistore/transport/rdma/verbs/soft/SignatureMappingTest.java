package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.SignatureMapping;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiType;
import io.pistore.spi.Protection;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import org.junit.jupiter.api.Test;

class SignatureMappingTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    @Test
    void practHostHasNoMemoryDomainAndPassHasBoth() {
        SigAttrs a = new SigAttrs();
        SignatureMapping.setHostAttrs(a, F, true, Protection.insertStrip(7), false);
        assertFalse(a.mem.isDif());
        assertTrue(a.wire.isDif());
        assertTrue(a.wire.refRemap, "generated PI has incrementing ref tags (Type 1)");
        assertEquals(4096, a.wire.piInterval);
        assertEquals(7, a.wire.refTag);
        assertTrue(a.wire.appEscape);
        assertFalse(a.wire.refEscape);
        assertEquals(SigAttrs.CHECK_GUARD | SigAttrs.CHECK_REFTAG, a.checkMask, "the host ignores the app check");
        SignatureMapping.setHostAttrs(a, F, true, Protection.pass(CheckFlags.ALL, 7, 1, 0xFFFF), true);
        assertTrue(a.mem.isDif() && a.wire.isDif());
        SignatureMapping.setTargetAttrs(a, F, true, Protection.pass(CheckFlags.ALL, 7, 1, 0xFFFF));
        assertEquals(0xff, a.checkMask, "the target honours the app check");
        SignatureMapping.setTargetAttrs(a, F, true, Protection.insertStrip(7));
        assertTrue(a.mem.isDif());
        assertFalse(a.wire.isDif(), "a target still seeing PRACT has no wire domain");
    }

    @Test
    void refRemapFollowsTheRefCheckAndType3NeverChecksTheRefTag() {
        SigAttrs a = new SigAttrs();
        SignatureMapping.setHostAttrs(a, F, false, Protection.pass(CheckFlags.GUARD, 7, 0, 0), true);
        assertFalse(a.wire.refRemap);
        assertEquals(SigAttrs.CHECK_GUARD, a.checkMask);
        BlockFormat t3 = F.withType(PiType.TYPE_3);
        SignatureMapping.setTargetAttrs(a, t3, true, Protection.pass(CheckFlags.ALL, 7, 0, 0));
        assertFalse(a.wire.refRemap);
        assertTrue(a.wire.refEscape);
        assertEquals(SigAttrs.CHECK_GUARD | SigAttrs.CHECK_APPTAG, a.checkMask);
        SignatureMapping.setHostAttrs(a, F.withGuard(GuardType.IP_CHECKSUM), true, Protection.insertStrip(0), false);
        assertEquals(DifGuard.CSUM, a.wire.bgType, "the wire carries the format's own guard");
    }

    @Test
    void onlyEightByteTuplesAtKnownIntervalsAreOffloaded() {
        var caps = new SoftDevice(true).caps();
        assertNull(SignatureMapping.offloadRefusal(BlockFormat.of(512, 8), caps));
        assertNull(SignatureMapping.offloadRefusal(F.withType(PiType.TYPE_3), caps));
        assertNotNull(SignatureMapping.offloadRefusal(BlockFormat.of(4096, 16), caps));
        assertNotNull(SignatureMapping.offloadRefusal(BlockFormat.of(4096, 0), caps));
        assertNotNull(SignatureMapping.offloadRefusal(BlockFormat.of(8192, 8), caps), "interval 8192");
        assertNotNull(SignatureMapping.offloadRefusal(BlockFormat.of(4096, 64, GuardType.CRC16, PiType.TYPE_1,
                io.pistore.integrity.PiLocation.LAST), caps), "metadata larger than the tuple");
        assertNotNull(SignatureMapping.offloadRefusal(F, new SoftDevice(false).caps()));
    }

    @Test
    void theErrorBlockIsTheOffsetOverIntervalPlus8InEveryPairing() {
        SigAttrs a = new SigAttrs();
        io.pistore.transport.rdma.verbs.MrStatus st = new io.pistore.transport.rdma.verbs.MrStatus();
        st.failed = true;
        st.errType = io.pistore.transport.rdma.verbs.SigErrorType.BAD_GUARD;
        // block 1000: far enough that dividing by 4096 instead of 4104 gives another block (1001)
        st.sigErrOffset = 1000 * 4104L;
        SignatureMapping.setHostAttrs(a, F, true, Protection.pass(CheckFlags.ALL, 7, 1, 0xFFFF), true); // DIF | DIF
        assertEquals(1000, SignatureMapping.toPiError(st, a).blockIndex());
        SignatureMapping.setHostAttrs(a, F, false, Protection.insertStrip(7), false); // NONE | DIF
        assertEquals(1000, SignatureMapping.toPiError(st, a).blockIndex());
        SignatureMapping.setTargetAttrs(a, F, false, Protection.insertStrip(7)); // DIF | NONE (target PRACT)
        assertFalse(a.wire.isDif());
        assertEquals(1000, SignatureMapping.toPiError(st, a).blockIndex(), "interval + 8 even without PI on the wire");
        assertEquals(4104, SignatureMapping.errorOffsetStride(a));
        assertEquals(1104, SignatureMapping.toCompletion(st, a, 104).errorLba());
    }

    @Test
    void aFailedStatusCheckIsInvalidProtectionInformation() {
        io.pistore.transport.rdma.verbs.MrStatus st = new io.pistore.transport.rdma.verbs.MrStatus();
        st.errno = io.pistore.transport.rdma.verbs.VerbsException.EINVAL;
        var c = SignatureMapping.toCompletion(st, new SigAttrs(), 5);
        assertNotNull(c, "nvme-rdma: ib_check_mr_status failing is NVME_SC_INVALID_PI, never success");
        assertEquals(io.pistore.spi.Status.INVALID_FIELD, c.status());
        assertTrue(c.message().contains("invalid protection information"), c.message());
    }
}
