package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.spi.Completion;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One peer of three fails while clients read, write, write-zeroes and flush through a peer that
 * stays up: no request fails, each completes (the longest stall is reported), and every block reads
 * back as last acknowledged. The operation timeout is set well above the election timeout, so a
 * request that waited for it instead of moving on to the new leader would show as a failure.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SinglePeerFailureTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final int CLIENTS = 3;
    private static final int BLOCKS_EACH = 8;
    /** Elections within 300-600 ms; an operation timeout far beyond what a failover should cost. */
    static final ReplicationSettings SETTINGS = ReplicationSettings.defaults()
            .withElectionTimeout(Duration.ofMillis(300), Duration.ofMillis(600))
            .withRpcTimeout(Duration.ofSeconds(1))
            .withOperationTimeout(Duration.ofSeconds(8));

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    /** The leader dies; the clients are on a follower. */
    @Test
    void theLeaderDiesUnderClientsOfAFollower() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, CLIENTS * BLOCKS_EACH, SETTINGS);
        int leader = peers.readyLeader();
        run((leader + 1) % 3, leader);
    }

    /** A follower dies; the clients are on the leader. */
    @Test
    void aFollowerDiesUnderClientsOfTheLeader() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, CLIENTS * BLOCKS_EACH, SETTINGS);
        int leader = peers.readyLeader();
        run(leader, (leader + 1) % 3);
    }

    /** The other follower dies; the clients are on a follower. */
    @Test
    void theOtherFollowerDiesUnderClientsOfAFollower() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, CLIENTS * BLOCKS_EACH, SETTINGS);
        int leader = peers.readyLeader();
        run((leader + 1) % 3, (leader + 2) % 3);
    }

    /** Clients on peer {@code via} until enough requests completed after peer {@code victim} stopped. */
    private void run(int via, int victim) throws Exception {
        try (ServedVolume s = new ServedVolume(peers.node(via), NAME)) {
            Clients c = new Clients(s);
            c.awaitOps(60);
            long killedAt = System.nanoTime();
            peers.stop(victim);
            int before = c.ops.get();
            c.awaitOps(before + 120);
            c.finish();
            assertEquals(List.of(), c.errors, "requests failed");
            c.verify();
            System.out.printf("peer %s stopped under clients of %s: %d requests, longest %d ms, "
                    + "%d ms from the stop to 120 more requests%n", ThreePeers.id(victim), ThreePeers.id(via),
                    c.ops.get(), TimeUnit.NANOSECONDS.toMillis(c.longest.get()),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
        }
    }

    /**
     * Client threads, each on its own blocks: a random mix of writes (new data each time), reads
     * (checked against the thread's last acknowledged write), write-zeroes and flushes.
     */
    static final class Clients {
        final AtomicInteger ops = new AtomicInteger();
        final AtomicLong longest = new AtomicLong();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final byte[][] expected = new byte[CLIENTS * BLOCKS_EACH][];
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Thread> threads = new ArrayList<>();
        private final ServedVolume s;

        Clients(ServedVolume s) {
            this.s = s;
            for (int i = 0; i < expected.length; i++) {
                expected[i] = new byte[FORMAT.dataSize()];
            }
            for (int t = 0; t < CLIENTS; t++) {
                int first = t * BLOCKS_EACH;
                Random rnd = new Random(31 + t);
                Thread th = new Thread(() -> loop(first, rnd), "client-" + t);
                threads.add(th);
                th.start();
            }
        }

        private void loop(int first, Random rnd) {
            while (!stop.get() && errors.isEmpty()) {
                int lba = first + rnd.nextInt(BLOCKS_EACH);
                int kind = rnd.nextInt(10);
                long t0 = System.nanoTime();
                try {
                    Completion c;
                    String what;
                    byte[] data = null;
                    ByteBuffer readInto = null;
                    if (kind < 4) {
                        data = new byte[FORMAT.dataSize()];
                        rnd.nextBytes(data);
                        what = "write lba=" + lba;
                        c = s.device.write(lba, io.pistore.integrity.ScatterList.wrap(data)).get(60, TimeUnit.SECONDS);
                    } else if (kind < 8) {
                        readInto = ByteBuffer.allocate(FORMAT.dataSize());
                        what = "read lba=" + lba;
                        c = s.device.read(lba, io.pistore.integrity.ScatterList.of(readInto)).get(60, TimeUnit.SECONDS);
                    } else if (kind < 9) {
                        what = "write-zeroes lba=" + lba;
                        data = new byte[FORMAT.dataSize()];
                        c = s.device.writeZeroes(lba, 1).get(60, TimeUnit.SECONDS);
                    } else {
                        what = "flush";
                        c = s.device.flush().get(60, TimeUnit.SECONDS);
                    }
                    long took = System.nanoTime() - t0;
                    longest.accumulateAndGet(took, Math::max);
                    if (!c.isSuccess()) {
                        errors.add(what + " after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms: " + c);
                        return;
                    }
                    if (data != null) {
                        expected[lba] = data;
                    } else if (readInto != null && !java.util.Arrays.equals(expected[lba], readInto.array())) {
                        errors.add(what + " returned other data than its last acknowledged write");
                        return;
                    }
                    ops.incrementAndGet();
                } catch (Exception e) {
                    errors.add(e.toString());
                    return;
                }
            }
        }

        void awaitOps(int n) {
            ThreePeers.await(() -> ops.get() >= n || !errors.isEmpty(), n + " requests completed");
        }

        void finish() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(60));
            }
        }

        void verify() throws Exception {
            for (int lba = 0; lba < expected.length; lba++) {
                ByteBuffer b = ByteBuffer.allocate(FORMAT.dataSize());
                Completion c = s.device.read(lba, io.pistore.integrity.ScatterList.of(b)).get(60, TimeUnit.SECONDS);
                assertTrue(c.isSuccess(), "read lba=" + lba + ": " + c);
                assertArrayEquals(expected[lba], b.array(), "lba " + lba + " holds its last acknowledged write");
            }
        }
    }
}
