package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.verbs.soft.LocalWork;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A command that finds the target's integrity-MR pool empty waits until an MR returns (nvmet-rdma
 * queues the command on rdma_rw's -EAGAIN) instead of failing. The target has one MR for a host
 * queue of depth 8, and its local work waits for the test, so all eight commands arrive while the
 * first one holds the MR.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TargetWaitsForAnMrTest {
    static final BlockFormat F = BlockFormat.of(512, 8);

    @Test
    void commandsWaitForTheOnlyMrAndAllSucceed() throws Exception {
        MemoryTarget backend = new MemoryTarget(F, 64);
        SoftDevice targetDev = new SoftDevice(true, LocalWork.MANUAL);
        RdmaTarget target = new RdmaTarget(targetDev, "127.0.0.1:0", backend, true, 1, true);
        RdmaHostConnection host = HostEndsAfterInvalidateTest.connect(new SoftDevice(true), target, 8);
        try {
            List<CompletableFuture<Completion>> writes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                byte[] b = new byte[512];
                Arrays.fill(b, (byte) (i + 1));
                writes.add(host.queue(0).submit(BlockRequest.write(MemoryTarget.VOLUME, i, 1, ScatterList.wrap(b), null,
                        Protection.insertStrip(i), false)));
            }
            runUntilDone(targetDev, writes);
            for (CompletableFuture<Completion> f : writes) {
                assertEquals(Status.SUCCESS, f.get().status(), f.get().toString());
            }
            List<CompletableFuture<Completion>> reads = new ArrayList<>();
            List<byte[]> backs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                byte[] back = new byte[512];
                backs.add(back);
                reads.add(host.queue(0).submit(BlockRequest.read(MemoryTarget.VOLUME, i, 1, ScatterList.wrap(back), null,
                        Protection.insertStrip(i))));
            }
            runUntilDone(targetDev, reads);
            for (int i = 0; i < 8; i++) {
                assertEquals(Status.SUCCESS, reads.get(i).get().status(), reads.get(i).get().toString());
                byte[] want = new byte[512];
                Arrays.fill(want, (byte) (i + 1));
                assertArrayEquals(want, backs.get(i));
            }
        } finally {
            targetDev.runLocalWork(null);
            host.close();
            target.close();
        }
    }

    private static void runUntilDone(SoftDevice dev, List<CompletableFuture<Completion>> fs) {
        CompletableFuture<Void> all = CompletableFuture.allOf(fs.toArray(new CompletableFuture[0]));
        Eventually.drive("every command to end", () -> dev.runLocalWork(null), all::isDone);
    }
}
