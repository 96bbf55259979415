package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.WrOpcode;
import io.pistore.transport.rdma.verbs.soft.LocalWork;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * nvme-rdma's order on the host: a request on the integrity-MR path ends when the LOCAL_INV of its
 * key has completed, not when the response arrived. The host's soft NIC holds its local work until
 * the test runs it ({@link LocalWork#MANUAL}), as a real NIC executes it after the post returned;
 * the target's runs inline.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostEndsAfterInvalidateTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    static RdmaHostConnection connect(SoftDevice dev, RdmaTarget target, int depth) throws Exception {
        return new RdmaHostConnection("soft", dev, new RdmaOptions("soft", RdmaOptions.PiMode.AUTO), target.address(),
                new ConnectOptions(1, depth));
    }

    /** Runs the device's local work whose head is {@code op} until {@code done} holds. */
    static void pumpUntil(SoftDevice dev, WrOpcode op, java.util.function.BooleanSupplier done) {
        Eventually.drive("the host's local work", () -> dev.runLocalWork(op), done);
    }

    @Test
    void anOffloadedWriteEndsOnlyWhenItsLocalInvalidateHasExecuted() throws Exception {
        MemoryTarget backend = new MemoryTarget(F, 64);
        SoftDevice hostDev = new SoftDevice(true, LocalWork.MANUAL);
        SoftDevice targetDev = new SoftDevice(true);
        RdmaTarget target = new RdmaTarget(targetDev, "127.0.0.1:0", backend, true);
        RdmaHostConnection host = connect(hostDev, target, 4);
        try {
            byte[] data = new byte[2 * 4096];
            Arrays.fill(data, (byte) 0x5A);
            CompletableFuture<Completion> f = host.queue(0).submit(BlockRequest.write(MemoryTarget.VOLUME, 3, 2,
                    ScatterList.wrap(data), null, Protection.insertStrip(3), false));
            assertEquals(1, hostDev.pendingLocalWork(WrOpcode.REG_MR_INTEGRITY), "the registration waits for the NIC");
            // The REG runs; the fenced SEND follows it; the target answers; the host posts its LOCAL_INV.
            pumpUntil(hostDev, WrOpcode.REG_MR_INTEGRITY, () -> hostDev.pendingLocalWork(WrOpcode.LOCAL_INV) == 1);
            assertEquals(1, host.offloadedRequests(MemoryTarget.VOLUME));
            assertThrows(TimeoutException.class, () -> f.get(200, TimeUnit.MILLISECONDS),
                    "the response arrived, but the key is still valid: the request must not end yet");
            assertEquals(1, hostDev.runLocalWork(null));
            Completion c = f.get(10, TimeUnit.SECONDS);
            assertEquals(Status.SUCCESS, c.status(), c.toString());
            assertArrayEquals(data, Arrays.copyOfRange(backend.data, 3 * 4096, 5 * 4096));
            assertEquals(0, hostDev.pendingLocalWork(null));
        } finally {
            hostDev.runLocalWork(null);
            host.close();
            target.close();
        }
    }

    @Test
    void anOffloadedReadEndsOnlyWhenItsLocalInvalidateHasExecuted() throws Exception {
        MemoryTarget backend = new MemoryTarget(F, 64);
        Arrays.fill(backend.data, (byte) 0x33);
        io.pistore.integrity.Pi.generate(io.pistore.integrity.PiContext.builder(F).initialRefTag(0).build(),
                ScatterList.wrap(backend.data), ScatterList.wrap(backend.meta), 64);
        SoftDevice hostDev = new SoftDevice(true, LocalWork.MANUAL);
        RdmaTarget target = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", backend, true);
        RdmaHostConnection host = connect(hostDev, target, 4);
        try {
            byte[] back = new byte[4096];
            CompletableFuture<Completion> f = host.queue(0).submit(BlockRequest.read(MemoryTarget.VOLUME, 7, 1,
                    ScatterList.wrap(back), null, Protection.insertStrip(7)));
            pumpUntil(hostDev, WrOpcode.REG_MR_INTEGRITY, () -> hostDev.pendingLocalWork(WrOpcode.LOCAL_INV) == 1);
            assertThrows(TimeoutException.class, () -> f.get(200, TimeUnit.MILLISECONDS));
            hostDev.runLocalWork(null);
            assertEquals(Status.SUCCESS, f.get(10, TimeUnit.SECONDS).status());
            byte[] want = new byte[4096];
            Arrays.fill(want, (byte) 0x33);
            assertArrayEquals(want, back);
            assertTrue(host.softwareRequests(MemoryTarget.VOLUME) == 0);
        } finally {
            hostDev.runLocalWork(null);
            host.close();
            target.close();
        }
    }
}
