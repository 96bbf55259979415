package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.soft.LocalWork;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rdma host given a list of peers moves on from a peer without the volume it uses, as the tcp
 * host does (the shared {@code ReconnectingHostQueue}): a NO_SUCH_VOLUME answer, a peer that no
 * longer lists it at a reconnect, and at connect a peer without the volume named in the options;
 * bounded once every peer is without it. Three soft-NIC targets, each able to drop its volume.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaMissingVolumeTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    /** A peer that may have dropped the volume (lists nothing, answers NO_SUCH_VOLUME). */
    static final class Peer implements TargetHandler {
        final MemoryTarget memory = new MemoryTarget(F, 64);
        volatile boolean gone;

        @Override
        public List<VolumeInfo> volumes() {
            return gone ? List.of() : memory.volumes();
        }

        @Override
        public void execute(BlockRequest r, io.pistore.spi.PiDuty duty, Consumer<Completion> done) {
            if (gone) {
                done.accept(Completion.failure(Status.NO_SUCH_VOLUME, "no such volume '" + r.volume() + "'"));
            } else {
                memory.execute(r, duty, done);
            }
        }
    }

    final Peer[] peers = {new Peer(), new Peer(), new Peer()};
    final RdmaTarget[] targets = new RdmaTarget[3];
    String a;
    String b;
    String c;

    @BeforeEach
    void setUp() throws Exception {
        for (int i = 0; i < 3; i++) {
            targets[i] = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", peers[i], true);
        }
        a = targets[0].address();
        b = targets[1].address();
        c = targets[2].address();
    }

    @AfterEach
    void tearDown() {
        for (RdmaTarget t : targets) {
            t.close();
        }
    }

    /** Fast reconnects, without path states: the answers and losses move the host here ({@code RdmaPathStatesTest} follows them). */
    private static RdmaOptions fastReconnect() {
        return RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft", "rdma.reconnectDelayMs", "10",
                "rdma.reconnectMaxDelayMs", "200", "rdma.pathStates", "false")));
    }

    private static Completion write(RdmaHostConnection h, int queue, long lba) throws Exception {
        return h.queue(queue).submit(BlockRequest.write(MemoryTarget.VOLUME, lba, 1, ScatterList.wrap(new byte[4096]),
                null, Protection.insertStrip(lba), false)).get(30, TimeUnit.SECONDS);
    }

    /** Writes until one is answered other than with a transport error; a hang guard, not a speed claim. */
    private static Completion writeUntilAnswered(RdmaHostConnection h, int queue, long lba) throws Exception {
        return Eventually.until("an answer other than a transport error (the queue still moving)",
                Duration.ofSeconds(60), () -> write(h, queue, lba), r -> r.status() != Status.TRANSPORT_ERROR);
    }

    @Test
    void aRelistHearsTheTargetsVolumesAsTheyAreNowOnEveryQueue() throws Exception {
        RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true), fastReconnect(), a,
                new ConnectOptions(2, 4));
        try {
            assertEquals(List.of("v"), names(h.volumes()));
            peers[0].gone = true;
            assertEquals(List.of("v"), names(h.volumes()), "not heard of until asked");
            assertEquals(List.of(), h.relistVolumes().get(30, TimeUnit.SECONDS));
            assertEquals(List.of(), h.volumes());
            peers[0].gone = false;
            assertEquals(List.of("v"), names(h.relistVolumes().get(30, TimeUnit.SECONDS)));
            for (int q = 0; q < 2; q++) {
                assertEquals(Status.SUCCESS, write(h, q, 5 + q).status(), "queue " + q + " after its DISCOVER");
            }
        } finally {
            h.close();
        }
    }

    private static List<String> names(List<VolumeInfo> l) {
        return l.stream().map(VolumeInfo::name).toList();
    }

    @ParameterizedTest(name = "packets={0}")
    @ValueSource(booleans = {false, true})
    void aPeerThatAnswersNoSuchVolumeIsLeftForTheNextThatHasIt(boolean packets) throws Exception {
        try (RdmaReconnectTest.RdmaLog log = new RdmaReconnectTest.RdmaLog()) {
            RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true, LocalWork.INLINE, packets),
                    fastReconnect(), a + "," + b + "," + c, new ConnectOptions(2, 4));
            try {
                assertEquals(Status.SUCCESS, write(h, 0, 1).status());
                peers[0].gone = true;
                Completion moving = write(h, 0, 2);
                assertEquals(Status.TRANSPORT_ERROR, moving.status(), moving.toString());
                assertTrue(moving.message().contains(a + " has no volume v"), moving.message());
                for (int q = 0; q < 2; q++) {
                    Completion w = writeUntilAnswered(h, q, 3 + q);
                    assertEquals(Status.SUCCESS, w.status(), w.toString());
                    assertEquals(b, h.peerOf(q), "queue " + q);
                }
                assertEquals(2, peers[1].memory.requests.size(), "both queues' writes on the second peer");
                assertEquals(1, log.count("failed over from " + a + " to " + b + " (queue 0) after 1 attempt: " + a
                        + " has no volume v"), log.lines.toString());
            } finally {
                h.close();
            }
        }
    }

    @Test
    void connectPassesOverAPeerWithoutTheNamedVolume() throws Exception {
        peers[0].gone = true;
        try (RdmaReconnectTest.RdmaLog log = new RdmaReconnectTest.RdmaLog()) {
            RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true), fastReconnect(),
                    a + "," + b + "," + c, new ConnectOptions(1, 4).volume(MemoryTarget.VOLUME));
            try {
                assertEquals(b, h.peerOf(0));
                assertEquals(1, h.volumes().size());
                assertEquals(Status.SUCCESS, write(h, 0, 1).status());
                assertEquals(1, log.count("connected to " + b + ", passing over " + a + ": no volume v there"),
                        log.lines.toString());
            } finally {
                h.close();
            }
        }
    }

    @Test
    void onceEveryPeerIsWithoutTheVolumeTheHostGetsNoSuchVolume() throws Exception {
        RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true), fastReconnect(),
                a + "," + b + "," + c, new ConnectOptions(1, 4));
        try {
            assertEquals(Status.SUCCESS, write(h, 0, 1).status());
            for (Peer p : peers) {
                p.gone = true;
            }
            Completion r = writeUntilAnswered(h, 0, 1);
            assertEquals(Status.NO_SUCH_VOLUME, r.status(), r.toString());
            long reconnects = h.reconnects();
            for (int i = 0; i < 5; i++) {
                Completion again = write(h, 0, 1);
                assertEquals(Status.NO_SUCH_VOLUME, again.status(), again.toString());
            }
            assertEquals(reconnects, h.reconnects(), "settled: it no longer moves");
        } finally {
            h.close();
        }
    }

    @Test
    void oneAddressIsNotLeftOnNoSuchVolume() throws Exception {
        RdmaHostConnection h = new RdmaHostConnection("soft", new SoftDevice(true), fastReconnect(), a,
                new ConnectOptions(1, 4));
        try {
            assertEquals(Status.SUCCESS, write(h, 0, 1).status());
            peers[0].gone = true;
            Completion r = write(h, 0, 1);
            assertEquals(Status.NO_SUCH_VOLUME, r.status(), r.toString());
            assertEquals(0, h.reconnects());
            assertEquals(a, h.peerOf(0));
        } finally {
            h.close();
        }
    }
}
