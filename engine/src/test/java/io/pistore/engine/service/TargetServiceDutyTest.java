package io.pistore.engine.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.MemoryVolume;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The target service does the PI work the request's duty leaves to it, and only that: each field
 * checked once along the path, the PI generated once, and the duty handed on to the volume with what
 * the target did recorded.
 */
class TargetServiceDutyTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private static final Protection PASS_ALL = Protection.pass(CheckFlags.ALL, 10, 0x77, 0xFFFF);

    /** A memory volume that records the duty each write arrived with. */
    private static final class Recording implements Volume {
        final MemoryVolume inner = new MemoryVolume("v", F, 64);
        final List<PiDuty> duties = new ArrayList<>();

        @Override public String name() { return inner.name(); }
        @Override public BlockFormat format() { return F; }
        @Override public long blockCount() { return inner.blockCount(); }
        @Override public void read(long lba, int n, ScatterList d, ScatterList m) throws IOException { inner.read(lba, n, d, m); }
        @Override public void write(long lba, int n, ScatterList d, ScatterList m, boolean fua) throws IOException {
            write(lba, n, d, m, fua, PiDuty.NONE);
        }
        @Override public void write(long lba, int n, ScatterList d, ScatterList m, boolean fua, PiDuty duty) throws IOException {
            duties.add(duty);
            inner.write(lba, n, d, m, fua);
        }
        @Override public void writeZeroes(long lba, int n, boolean fua) throws IOException { inner.writeZeroes(lba, n, fua); }
        @Override public void flush() { }
        @Override public void close() { }
    }

    private final Recording volume = new Recording();
    private final TargetService target;

    TargetServiceDutyTest() {
        VolumeStore store = VolumeStore.inMemory();
        store.attach(volume);
        target = new TargetService(store);
    }

    private static byte[][] block(long seed, int appTag) {
        byte[] d = new byte[F.dataSize()];
        new Random(seed).nextBytes(d);
        byte[] m = new byte[F.metadataSize()];
        Pi.generate(PiContext.builder(F).initialRefTag(10).appTag(appTag).build(), ScatterList.wrap(d), ScatterList.wrap(m), 1);
        return new byte[][] {d, m};
    }

    private Completion write(byte[][] b, Protection p, PiDuty duty) throws IOException {
        return target.executeNow(BlockRequest.write("v", 10, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), p, false), duty);
    }

    @Test
    void withNothingCheckedBeforeTheTargetChecksEveryAskedFieldAndSaysSoToTheVolume() throws IOException {
        byte[][] bad = block(1, 0x77);
        bad[1][0] ^= 0x01; // guard
        Completion c = write(bad, PASS_ALL, PiDuty.of(PASS_ALL));
        assertEquals(Status.GUARD_CHECK, c.status(), c.toString());
        assertTrue(volume.duties.isEmpty(), "a failing write reaches no volume");

        assertEquals(Status.SUCCESS, write(block(1, 0x77), PASS_ALL, PiDuty.of(PASS_ALL)).status());
        PiDuty d = volume.duties.get(0);
        assertEquals(CheckFlags.ALL, d.checked());
        assertEquals(PiDuty.Hop.TARGET, d.checker());
    }

    @Test
    void fieldsAnEarlierHopCheckedAreNotCheckedAgainAndTheOthersAre() throws IOException {
        PiDuty guardAtWire = PiDuty.of(PASS_ALL).checkedBy(PiDuty.Hop.WIRE, CheckFlags.GUARD);
        // The app tag is left to the target: a wrong one is caught here.
        Completion c = write(block(2, 0x55), PASS_ALL, guardAtWire);
        assertEquals(Status.APP_TAG_CHECK, c.status(), c.toString());
        // The guard was the wire's: the target does not check it again (a wire that checked it would
        // have refused this block; the target trusts the duty, so it is stored as it came).
        byte[][] badGuard = block(3, 0x77);
        badGuard[1][1] ^= 0x01;
        assertEquals(Status.SUCCESS, write(badGuard, PASS_ALL, guardAtWire).status());
        assertEquals(CheckFlags.ALL, volume.duties.get(0).checked(), "the target added app and ref");
        // Everything checked at the wire: nothing left, the duty reaches the volume as the wire left it.
        PiDuty all = PiDuty.of(PASS_ALL).checkedBy(PiDuty.Hop.WIRE);
        assertEquals(Status.SUCCESS, write(block(4, 0x77), PASS_ALL, all).status());
        assertEquals(all, volume.duties.get(1));
    }

    @Test
    void aPractWriteWhosePiTheHostGeneratedIsNotGeneratedAgain() throws IOException {
        Protection pract = Protection.insertStrip(10);
        byte[][] b = block(5, 0x1234); // the host's encoder put its own app tag there
        PiDuty duty = PiDuty.of(pract).generatedBy(PiDuty.Hop.HOST).checkedBy(PiDuty.Hop.WIRE);
        assertEquals(Status.SUCCESS, write(b, pract, duty).status());
        byte[] meta = new byte[F.metadataSize()];
        volume.read(10, 1, ScatterList.wrap(new byte[F.dataSize()]), ScatterList.wrap(meta));
        assertArrayEquals(b[1], meta, "stored as the host generated it, not generated again (app tag 0)");
    }

    @Test
    void aPractWriteLeftToTheTargetIsGeneratedHereAndVouchedForEveryField() throws IOException {
        Protection pract = Protection.insertStrip(10);
        byte[] d = new byte[F.dataSize()];
        new Random(6).nextBytes(d);
        Completion c = target.executeNow(BlockRequest.write("v", 10, 1, ScatterList.wrap(d), null, pract, false));
        assertEquals(Status.SUCCESS, c.status(), c.toString());
        PiDuty got = volume.duties.get(0);
        assertEquals(PiDuty.Hop.TARGET, got.generator());
        assertTrue(got.covers(CheckFlags.ALL), got.toString());
        byte[] meta = new byte[F.metadataSize()];
        volume.read(10, 1, ScatterList.wrap(new byte[F.dataSize()]), ScatterList.wrap(meta));
        assertEquals(null, Pi.verify(PiContext.builder(F).initialRefTag(10).checks(CheckFlags.ALL).build(),
                ScatterList.wrap(d), ScatterList.wrap(meta), 1));
    }

    @Test
    void aReadWhosePiTheHostChecksIsReturnedUncheckedButTheUnwrittenRuleStillHolds() throws IOException {
        byte[][] b = block(7, 0x77);
        volume.inner.write(10, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), false);
        b[1][0] ^= 0x01;
        volume.inner.write(11, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), false); // a bad stored guard
        byte[] nonZero = new byte[F.dataSize()];
        nonZero[9] = 1;
        volume.inner.write(12, 1, ScatterList.wrap(nonZero), ScatterList.wrap(UnwrittenBlock.metadata(F)), false);
        Protection p = Protection.pass(CheckFlags.ALL, 11, 0x77, 0xFFFF);
        BlockRequest r = BlockRequest.read("v", 11, 1, ScatterList.wrap(new byte[F.dataSize()]),
                ScatterList.wrap(new byte[F.metadataSize()]), p);
        assertEquals(Status.SUCCESS, target.executeNow(r, PiDuty.of(p).checkedBy(PiDuty.Hop.HOST)).status(),
                "the host checks it: the target returns it as stored");
        assertEquals(Status.GUARD_CHECK, target.executeNow(r, PiDuty.of(p)).status(), "left to the target: caught here");
        BlockRequest unwritten = BlockRequest.read("v", 12, 1, ScatterList.wrap(new byte[F.dataSize()]),
                ScatterList.wrap(new byte[F.metadataSize()]), Protection.pass(CheckFlags.ALL, 12, 0, 0));
        Completion c = target.executeNow(unwritten, PiDuty.of(unwritten.protection()).checkedBy(PiDuty.Hop.HOST));
        assertEquals(Status.GUARD_CHECK, c.status(), "no PI check looks behind the unwritten escape: the target does, always");
    }
}
