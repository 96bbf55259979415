package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read index confirmed while a peer led serves only the reads received before it was asked: a
 * read that peer receives after a later write was acknowledged elsewhere waits for that write, even
 * while its own replica lags behind (its applier held here). Sharing the old index would return the
 * block as it was before the write: a stale read.
 */
class SharedReadIndexTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        VolumeStateMachine.beforeApply = id -> { };
        if (peers != null) {
            peers.close();
        }
    }

    @Test
    void aReadReceivedAfterAnAcknowledgedWriteSeesItOnAPeerThatLedAndLags() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int f = (l + 1) % 3;
        Random r = new Random(25);
        byte[] a = new byte[FORMAT.dataSize()];
        byte[] b = new byte[FORMAT.dataSize()];
        r.nextBytes(a);
        r.nextBytes(b);
        CountDownLatch release = new CountDownLatch(1);
        try (ServedVolume onOld = new ServedVolume(peers.node(l), NAME);
                ServedVolume onNew = new ServedVolume(peers.node(f), NAME)) {
            onOld.device.writeSync(9, ByteBuffer.wrap(a));
            assertArrayEquals(a, onOld.readReceived(9, System.nanoTime()), "confirmed while it leads");

            onNew.volume.transferLeadership(ThreePeers.id(f));
            ThreePeers.await(() -> peers.leads(f) && !peers.leads(l), ThreePeers.id(f) + " to lead and " + ThreePeers.id(l) + " to step down");
            RaftPeerId held = RaftPeerId.valueOf(ThreePeers.id(l));
            VolumeStateMachine.beforeApply = id -> {
                if (id.equals(held)) {
                    try {
                        release.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            onNew.device.writeSync(9, ByteBuffer.wrap(b)); // acknowledged by the new leader and the third peer

            long received = System.nanoTime();
            Thread[] reader = new Thread[1];
            CompletableFuture<byte[]> seen = CompletableFuture.supplyAsync(() -> {
                reader[0] = Thread.currentThread();
                try {
                    return onOld.readReceived(9, received);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            // Released once the read has answered (a stale one answers at once) or waits for this replica.
            ThreePeers.await(() -> seen.isDone() || (reader[0] != null && reader[0].getState() == Thread.State.TIMED_WAITING),
                    "the read to answer or to wait");
            release.countDown();
            assertArrayEquals(b, seen.get(60, TimeUnit.SECONDS), "the write acknowledged before the read was received");
        } finally {
            release.countDown();
        }
    }
}
