package io.pistore.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.stats.PiErrorPlace;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.stats.VolumeCounters;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Each PI check is made once, at the hop the request's PI duty gives it: a bad write is caught at
 * the wire over tcp (its target end checks the arriving bytes) and at the target over local (nothing
 * checks before it), each counted once, at that place only; a block bad at rest is caught by the
 * target over local (place rest) and by the host over tcp, never by both.
 */
class PiErrorPlacesTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final Map<String, String> ADDRESS = Map.of("tcp", "127.0.0.1:0", "local", "");

    /** One block for LBA {@code lba} with a good tuple; the caller spoils what it wants. */
    private static byte[][] block(long lba) {
        byte[] data = new byte[512];
        data[3] = (byte) lba;
        byte[] meta = new byte[8];
        Pi.generate(PiContext.builder(F).initialRefTag(F.refTagOf(lba)).build(), ScatterList.wrap(data),
                ScatterList.wrap(meta), 1);
        return new byte[][] {data, meta};
    }

    private static void assertOnlyAt(VolumeCounters v, PiErrorKind kind, PiErrorPlace at, String who) {
        for (PiErrorPlace p : PiErrorPlace.values()) {
            assertEquals(p == at ? 1 : 0, v.piErrors(kind, p), who + ": " + kind + " errors at " + p);
        }
    }

    private static void run(String transport, PiErrorPlace badWriteAt, PiErrorPlace badReadAtTarget,
            PiErrorPlace badReadAtHost) throws Exception {
        try (VolumeStore store = VolumeStore.inMemory()) {
            Volume v = store.create("v1", F, 64);
            byte[][] rotten = block(7);
            rotten[1][0] ^= 0x01; // its stored guard no longer matches
            v.write(7, 1, ScatterList.wrap(rotten[0]), ScatterList.wrap(rotten[1]), false);
            TargetStats target = new TargetStats();
            TargetStats host = new TargetStats();
            try (BlockTransport t = Transports.find(transport, TransportOptions.NONE).create(TransportOptions.NONE);
                 TargetListener l = t.listen(ADDRESS.get(transport), target.measure(transport, new TargetService(store)));
                 HostConnection c = host.measureHost(transport, t.connect(l.address(), new ConnectOptions(1, 8)))) {
                BlockDevice d = BlockDevice.open(c, "v1");
                byte[][] bad = block(3);
                bad[1][1] ^= 0x01;
                Completion w = d.write(3, ScatterList.wrap(bad[0]), ScatterList.wrap(bad[1]),
                        Protection.pass(CheckFlags.ALL, F.refTagOf(3), 0, 0), false).get(10, TimeUnit.SECONDS);
                assertEquals(Status.GUARD_CHECK, w.status(), w.toString());
                assertFalse(w.caughtByHost());
                assertOnlyAt(target.transport(transport).volume("v1"), PiErrorKind.GUARD, badWriteAt, transport + " target");

                Completion r = d.read(7, ScatterList.wrap(new byte[512])).get(10, TimeUnit.SECONDS);
                assertEquals(Status.GUARD_CHECK, r.status(), r.toString());
                assertEquals(badReadAtHost != null, r.caughtByHost(), r.toString());
                VolumeCounters tv = target.transport(transport).volume("v1");
                VolumeCounters hv = host.transport(transport).volume("v1");
                assertEquals(badReadAtTarget == null ? 0 : 1, tv.piErrors(PiErrorKind.GUARD, PiErrorPlace.REST),
                        transport + ": the target's count of the bad stored block");
                assertEquals(badReadAtHost == null ? 0 : 1, hv.piErrors(PiErrorKind.GUARD, PiErrorPlace.HOST),
                        transport + ": the host's count of the bad stored block");
            }
        }
    }

    @Test
    void overTcpABadWriteIsCaughtAtTheWireAndABadStoredBlockAtTheHost() throws Exception {
        run("tcp", PiErrorPlace.WIRE, null, PiErrorPlace.HOST);
    }

    @Test
    void overLocalBothAreCaughtByTheTarget() throws Exception {
        run("local", PiErrorPlace.TARGET, PiErrorPlace.REST, null);
    }
}
