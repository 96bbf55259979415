package io.pistore.transport.rdma.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import io.pistore.spi.Availability;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The DiSNI provider without hardware: its probe never throws, and work requests map to DiSNI's. */
class DisniProviderTest {
    static DisniProbe.Steps steps(boolean classes, boolean exported, Throwable open, Throwable channel) {
        return new DisniProbe.Steps() {
            @Override
            public void classes() throws Throwable {
                if (!classes) throw new ClassNotFoundException("com.ibm.disni.verbs.RdmaVerbs");
            }

            @Override
            public boolean sunNioChExported() {
                return exported;
            }

            @Override
            public void openVerbs() throws Throwable {
                if (open != null) throw open;
            }

            @Override
            public void eventChannel() throws Throwable {
                if (channel != null) throw channel;
            }
        };
    }

    @Test
    void theRealProbeNeverThrowsAndGivesOneLine() {
        Availability a = new DisniVerbsProvider().probe();
        assertFalse(a.isAvailable(), "no libdisni or RDMA device on a build machine");
        assertFalse(a.cause().contains("\n"));
        assertThrows(VerbsException.class, () -> new DisniVerbsProvider().open(TransportOptions.NONE));
    }

    @Test
    void eachCauseIsOneLine() {
        assertTrue(DisniProbe.run(steps(false, true, null, null)).cause().contains("not on the class path"));
        assertTrue(DisniProbe.run(steps(true, false, null, null)).cause()
                .contains("--add-exports java.base/sun.nio.ch=ALL-UNNAMED"));
        Availability noLib = DisniProbe.run(steps(true, true, new UnsatisfiedLinkError(
                "no disni in java.library.path: /usr/java/packages/lib:/usr/lib"), null));
        assertTrue(noLib.cause().startsWith("libdisni not found"), noLib.cause());
        Availability noLib2 = DisniProbe.run(steps(true, true, new NoClassDefFoundError(
                "Could not initialize class com.ibm.disni.verbs.impl.NativeDispatcher"), null));
        assertTrue(noLib2.cause().contains("disni"), noLib2.cause());
        Availability noDev = DisniProbe.run(steps(true, true, null, new IOException(
                "j2c::createEventChannel: rdma_create_event_channel failed: No such device\n")));
        assertEquals("no RDMA device (j2c::createEventChannel: rdma_create_event_channel failed: No such device)",
                noDev.cause());
        assertTrue(DisniProbe.run(steps(true, true, null, null)).isAvailable());
    }

    @Test
    void selectingDisniWithoutADeviceIsUnavailableWithTheProbesLine() {
        io.pistore.transport.rdma.RdmaTransportProvider p = new io.pistore.transport.rdma.RdmaTransportProvider();
        TransportOptions disni = TransportOptions.NONE.with("rdma.provider", "disni");
        Availability a = p.availability(disni);
        assertFalse(a.isAvailable());
        assertEquals("verbs provider disni: " + new DisniVerbsProvider().probe().cause(), a.cause());
        assertFalse(a.cause().contains("\n"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.create(disni));
        assertEquals(a.cause(), e.getMessage());
    }

    @Test
    void disniDevicesHaveNoIntegrityMr() {
        assertFalse(DisniVerbsProvider.caps(1024).has(Capability.INTEGRITY_MR));
        assertTrue(DisniVerbsProvider.caps(1024).has(Capability.RDMA_READ));
    }

    @Test
    void workRequestsMapToDisniAndIntegrityWorkIsRefused() throws Exception {
        SendWr reg = new SendWr(1);
        reg.opcode = WrOpcode.RDMA_WRITE;
        reg.wrId = 7;
        reg.addSge(0x1000, 512, 0x42);
        reg.remoteAddr = 0x2000;
        reg.rkey = 0x99;
        SendWr send = new SendWr(1);
        send.wrId = 8;
        send.signaled = true;
        send.addSge(0x3000, 64, 0x42);
        reg.next = send;
        List<IbvSendWR> l = DisniWorkRequests.toSend(reg);
        assertEquals(2, l.size());
        assertEquals(IbvSendWR.IBV_WR_RDMA_WRITE, l.get(0).getOpcode());
        assertEquals(0x2000, l.get(0).getRdma().getRemote_addr());
        assertEquals(0x99, l.get(0).getRdma().getRkey());
        assertEquals(0, l.get(0).getSend_flags() & IbvSendWR.IBV_SEND_SIGNALED);
        assertEquals(512, l.get(0).getSge(0).getLength());
        assertEquals(IbvSendWR.IBV_WR_SEND, l.get(1).getOpcode());
        assertEquals(IbvSendWR.IBV_SEND_SIGNALED, l.get(1).getSend_flags());
        assertEquals(8, l.get(1).getWr_id());
        RecvWr r = new RecvWr(1);
        r.wrId = 3;
        r.addSge(0x5000, 256, 1);
        List<IbvRecvWR> rl = DisniWorkRequests.toRecv(r);
        assertEquals(3, rl.get(0).getWr_id());
        assertEquals(1, rl.get(0).getNum_sge());
        for (WrOpcode op : new WrOpcode[] {WrOpcode.REG_MR_INTEGRITY, WrOpcode.LOCAL_INV, WrOpcode.SEND_WITH_INV}) {
            SendWr w = new SendWr(1);
            w.opcode = op;
            assertEquals(VerbsException.EOPNOTSUPP, assertThrows(VerbsException.class,
                    () -> DisniWorkRequests.toSend(w)).errno());
        }
        WorkCompletion wc = DisniWorkRequests.fromWc(5, 10, 2, 100, 77, 0, new WorkCompletion());
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status);
        assertEquals(WcOpcode.RDMA_READ, wc.opcode);
        assertEquals(WcOpcode.RECV, DisniWorkRequests.fromWc(5, 0, 128, 1, 1, 0, new WorkCompletion()).opcode);
        assertEquals(WcStatus.WR_FLUSH_ERR, WcStatus.of(5));
    }
}
