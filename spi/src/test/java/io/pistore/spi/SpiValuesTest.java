package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The SPI's value classes: what each factory sets, the ranges their constructors refuse (with the
 * message a caller sees), and the one-line forms that logs and tools print.
 */
class SpiValuesTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);

    @Test
    void aWriteFenceHasAKeyAndAnEpochFromOneAndTravelsWithItsRequest() {
        assertThrows(IllegalArgumentException.class, () -> new WriteFence(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new WriteFence(5, 0));
        assertNull(WriteFence.ofWire(0, 7), "key 0 on a wire: no fence");
        assertEquals(new WriteFence(5, 1), WriteFence.ofWire(5, 0));
        WriteFence f = new WriteFence(-3, 2);
        assertSame(f, WriteFence.reuse(f, -3, 2), "the same fence: the same object");
        assertEquals(new WriteFence(-3, 3), WriteFence.reuse(f, -3, 3));
        assertNull(WriteFence.reuse(f, 0, 3));
        BlockRequest w = BlockRequest.writeZeroes("v", 1, 2, false);
        assertNull(w.fence());
        assertSame(w, w.withFence(null));
        BlockRequest fenced = w.withFence(f);
        assertSame(f, fenced.fence());
        assertSame(f, fenced.withProtection(Protection.NONE).fence(), "kept by the other copies");
        assertTrue(fenced.toString().endsWith("fence fffffffffffffffd/2"), fenced.toString());
    }

    @Test
    void aReadsReceiveTimeTravelsWithItsCopies() {
        io.pistore.integrity.ScatterList d = io.pistore.integrity.ScatterList.wrap(new byte[4096]);
        assertEquals(0, BlockRequest.read("v", 1, 1, d, null, Protection.NONE).receivedNanos(), "unknown");
        BlockRequest r = BlockRequest.read("v", 1, 1, d, null, Protection.NONE, 1234);
        assertEquals(1234, r.receivedNanos());
        assertEquals(1234, r.withProtection(Protection.NONE).withBuffers(d, null).withFence(new WriteFence(5, 1))
                .receivedNanos(), "kept by the other copies");
    }

    @Test
    void availabilityIsOneLine() {
        assertTrue(Availability.available().isAvailable());
        assertNull(Availability.available().cause());
        assertEquals("available", Availability.available().toString());
        Availability a = Availability.unavailable("  no device\nfound  ");
        assertFalse(a.isAvailable());
        assertEquals("no device found", a.cause());
        assertEquals("unavailable: no device found", a.toString());
        NullPointerException e = assertThrows(NullPointerException.class, () -> Availability.unavailable(null));
        assertEquals("cause", e.getMessage());
    }

    @Test
    void connectOptionsAcceptTheirRangesInclusive() {
        for (int[] ok : new int[][] {{1, 1}, {256, 4096}, {1, 4096}, {256, 1}}) {
            ConnectOptions o = new ConnectOptions(ok[0], ok[1]);
            assertEquals(ok[0], o.queues());
            assertEquals(ok[1], o.queueDepth());
        }
        assertEquals("queues must be 1 to 256, not 0",
                assertThrows(IllegalArgumentException.class, () -> new ConnectOptions(0, 1)).getMessage());
        assertEquals("queues must be 1 to 256, not 257",
                assertThrows(IllegalArgumentException.class, () -> new ConnectOptions(257, 1)).getMessage());
        assertEquals("queue depth must be 1 to 4096, not 0",
                assertThrows(IllegalArgumentException.class, () -> new ConnectOptions(1, 0)).getMessage());
        assertEquals("queue depth must be 1 to 4096, not 4097",
                assertThrows(IllegalArgumentException.class, () -> new ConnectOptions(1, 4097)).getMessage());
        ConnectOptions d = ConnectOptions.defaults();
        assertEquals(1, d.queues());
        assertEquals(32, d.queueDepth());
        assertNull(d.volume(), "no volume named unless asked");
        ConnectOptions named = d.volume("disk1");
        assertEquals("disk1", named.volume());
        assertEquals(1, named.queues());
        assertEquals(32, named.queueDepth());
        assertNull(d.volume(), "the original is unchanged");
    }

    @Test
    void operationsSayWhichWayDataMoves() {
        for (Operation op : Operation.values()) {
            assertEquals(op == Operation.WRITE, op.carriesDataToTarget(), op.toString());
            assertEquals(op == Operation.READ, op.carriesDataToHost(), op.toString());
        }
    }

    @Test
    void protectionTagsAreSixteenBitsEachInclusive() {
        Protection max = new Protection(true, CheckFlags.ALL, 5, 0xFFFF, 0xFFFF);
        assertEquals(0xFFFF, max.appTag());
        assertEquals(0xFFFF, max.appMask());
        for (int[] bad : new int[][] {{-1, 0}, {0x10000, 0}, {0, -1}, {0, 0x10000}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new Protection(false, CheckFlags.NONE, 0, bad[0], bad[1]));
            assertEquals("app tag and mask must be 0 to 0xFFFF", e.getMessage());
        }
        Protection p = Protection.pass(CheckFlags.of(true, false, true), 0xABCDL, 0x12, 0xF0);
        assertFalse(p.pract());
        assertEquals(CheckFlags.of(true, false, true), p.checks());
        assertEquals(0xABCDL, p.initialRefTag());
        assertEquals("pass checks=guard,ref ref=0xabcd app=0x12/0xf0", p.toString());
        Protection ins = Protection.insertStrip(9);
        assertTrue(ins.pract());
        assertSame(CheckFlags.ALL, ins.checks());
        assertEquals(0, ins.appTag());
        assertEquals(0, ins.appMask());
        assertEquals("insert/strip checks=guard,app,ref ref=0x9 app=0x0/0x0", ins.toString());
        assertFalse(Protection.NONE.pract());
        assertTrue(Protection.NONE.checks().isNone());
    }

    @Test
    void completionsCarryTheirStatusLbaAndReason() {
        Completion ok = Completion.success();
        assertTrue(ok.isSuccess());
        assertEquals(-1, ok.errorLba());
        assertNull(ok.piError());
        assertNull(ok.message());
        assertEquals("SUCCESS", ok.toString());

        Completion f = Completion.failure(Status.MEDIA_ERROR, "disk gone");
        assertFalse(f.isSuccess());
        assertEquals(Status.MEDIA_ERROR, f.status());
        assertEquals(-1, f.errorLba());
        assertNull(f.piError());
        assertEquals("MEDIA_ERROR: disk gone", f.toString());
        for (Status s : new Status[] {Status.SUCCESS, Status.GUARD_CHECK, Status.APP_TAG_CHECK, Status.REF_TAG_CHECK}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Completion.failure(s, "x"));
            assertEquals("use success() or piError() for " + s, e.getMessage());
        }

        PiError e = new PiError(PiErrorKind.REF_TAG, 3, 0x1F, 0x20);
        Completion pi = Completion.piError(100, e);
        assertEquals(Status.REF_TAG_CHECK, pi.status());
        assertEquals(103, pi.errorLba(), "the request's LBA plus the block index");
        assertSame(e, pi.piError(), "the block index stays relative to the request");
        assertEquals("lba=103 error=ref expected=0x1f actual=0x20", pi.message());
        assertEquals("REF_TAG_CHECK: lba=103 error=ref expected=0x1f actual=0x20", pi.toString());
        assertFalse(pi.caughtByHost(), "reported by the target");
        assertFalse(f.caughtByHost());

        Completion host = Completion.piErrorCaughtByHost(100, e);
        assertTrue(host.caughtByHost(), "caught by the host side as the read's data arrived");
        assertEquals(Status.REF_TAG_CHECK, host.status());
        assertEquals(103, host.errorLba());
        assertSame(e, host.piError());
        assertEquals("lba=103 error=ref expected=0x1f actual=0x20", host.message());
    }

    @Test
    void blockRequestsKeepTheirFieldsThroughCopies() {
        ScatterList data = ScatterList.of(ByteBuffer.allocate(4096));
        ScatterList meta = ScatterList.of(ByteBuffer.allocate(8));
        Protection p = Protection.insertStrip(7);
        BlockRequest w = BlockRequest.write("v", 7, 1, data, meta, p, true);
        assertEquals(Operation.WRITE, w.op());
        assertEquals("v", w.volume());
        assertEquals(7, w.lba());
        assertEquals(1, w.blocks());
        assertSame(data, w.data());
        assertSame(meta, w.metadata());
        assertTrue(w.hasMetadata());
        assertSame(p, w.protection());
        assertTrue(w.fua());
        assertEquals("WRITE v lba=7 blocks=1 +meta insert/strip checks=guard,app,ref ref=0x7 app=0x0/0x0 fua",
                w.toString());

        ScatterList other = ScatterList.of(ByteBuffer.allocate(4096));
        BlockRequest moved = w.withBuffers(other, null);
        assertSame(other, moved.data());
        assertNull(moved.metadata());
        assertFalse(moved.hasMetadata());
        assertEquals(7, moved.lba());
        assertEquals(1, moved.blocks());
        assertTrue(moved.fua());
        assertSame(p, moved.protection());
        assertEquals("WRITE v lba=7 blocks=1 insert/strip checks=guard,app,ref ref=0x7 app=0x0/0x0 fua",
                moved.toString());

        BlockRequest cleared = w.withProtection(null);
        assertSame(Protection.NONE, cleared.protection(), "no protection is Protection.NONE");
        assertSame(meta, cleared.metadata());
        assertTrue(cleared.fua());

        BlockRequest r = BlockRequest.read("v", 2, 3, null, null, null);
        assertEquals(0, r.data().length(), "no buffer is an empty list");
        assertFalse(r.fua());
        assertSame(Protection.NONE, r.protection());
    }

    @Test
    void requestsWithoutBuffersHaveNone() {
        BlockRequest flush = BlockRequest.flush("v");
        assertEquals(Operation.FLUSH, flush.op());
        assertEquals(0, flush.lba());
        assertEquals(0, flush.blocks());
        assertEquals(0, flush.data().length());
        assertFalse(flush.hasMetadata());
        assertFalse(flush.fua());
        BlockRequest z = BlockRequest.writeZeroes("v", 10, 4, true);
        assertEquals(Operation.WRITE_ZEROES, z.op());
        assertEquals(10, z.lba());
        assertEquals(4, z.blocks());
        assertTrue(z.fua());
        BlockRequest d = BlockRequest.deallocate("v", 11, 5);
        assertEquals(Operation.DEALLOCATE, d.op());
        assertEquals(11, d.lba());
        assertEquals(5, d.blocks());
        assertFalse(d.fua());
        assertEquals("volume", assertThrows(NullPointerException.class, () -> BlockRequest.flush(null)).getMessage());
    }

    @Test
    void volumeInfoIsAValue() {
        VolumeInfo v = new VolumeInfo("v", 10, F);
        assertEquals(40960, v.dataBytes(), "data only, not metadata");
        assertEquals("v 10 blocks 4096+8 type=1 guard=crc16 pi=first", v.toString());
        VolumeInfo same = new VolumeInfo("v", 10, BlockFormat.of(4096, 8));
        assertEquals(v, same);
        assertEquals(v.hashCode(), same.hashCode());
        assertNotEquals(v, new VolumeInfo("w", 10, F));
        assertNotEquals(v.hashCode(), new VolumeInfo("w", 10, F).hashCode(), "the hash follows the name");
        assertNotEquals(v, new VolumeInfo("v", 11, F));
        assertNotEquals(v, new VolumeInfo("v", 10, BlockFormat.of(512, 8)));
        assertNotEquals(v, "v");
        assertEquals("name", assertThrows(NullPointerException.class, () -> new VolumeInfo(null, 1, F)).getMessage());
        assertEquals("format", assertThrows(NullPointerException.class, () -> new VolumeInfo("v", 1, null)).getMessage());
    }

    @Test
    void capabilitiesKeepACopyOfTheHardwareGuards() {
        Set<GuardType> g = EnumSet.of(GuardType.CRC16);
        TransportCapabilities c = new TransportCapabilities(g, 4096);
        g.add(GuardType.CRC64);
        assertEquals(Set.of(GuardType.CRC16), c.hardwareGuards(), "a later change of the caller's set is not seen");
        assertTrue(c.checksInHardware(GuardType.CRC16));
        assertFalse(c.checksInHardware(GuardType.CRC64));
        assertThrows(UnsupportedOperationException.class, () -> c.hardwareGuards().add(GuardType.CRC64));
        assertEquals(4096, c.maxTransferBytes());
        assertEquals("hardwareGuards=[CRC16] maxTransfer=4096", c.toString());
        TransportCapabilities soft = new TransportCapabilities(Set.of(), 1);
        assertTrue(soft.hardwareGuards().isEmpty());
        assertEquals(1, soft.maxTransferBytes());
        assertEquals("the transfer limit must be positive, not 0", assertThrows(IllegalArgumentException.class,
                () -> new TransportCapabilities(Set.of(), 0)).getMessage());
    }

    @Test
    void reconnectPoliciesTakeDelaysFromOneMillisecondAndDoubleUpToTheLongest() {
        ReconnectPolicy.Scheduler never = (task, delay) -> false;
        ReconnectPolicy one = new ReconnectPolicy(true, 1, 1, never);
        assertEquals(1, one.delayBefore(1));
        assertEquals(1, one.delayBefore(5), "never longer than the longest");
        assertEquals("reconnect delays of 0 and 5 ms",
                assertThrows(IllegalArgumentException.class, () -> new ReconnectPolicy(true, 0, 5, never)).getMessage());
        assertEquals("reconnect delays of 5 and 0 ms",
                assertThrows(IllegalArgumentException.class, () -> new ReconnectPolicy(true, 5, 0, never)).getMessage());
        ReconnectPolicy p = new ReconnectPolicy(false, 10, 45, never);
        assertEquals(List.of(10L, 20L, 40L, 45L, 45L),
                List.of(p.delayBefore(1), p.delayBefore(2), p.delayBefore(3), p.delayBefore(4), p.delayBefore(9)));
        assertFalse(p.enabled());
        assertFalse(p.scheduler().schedule(() -> { }, 1));
    }

    @Test
    void pathStatesHaveLabelsAndWireCodes() {
        assertEquals("optimized", PathState.OPTIMIZED.label());
        assertEquals("non-optimized", PathState.NON_OPTIMIZED.label());
        assertEquals("inaccessible", PathState.INACCESSIBLE.label());
        for (PathState s : PathState.values()) {
            assertSame(s, PathState.of(s.code()));
        }
        assertNull(PathState.of(3));
        assertNull(PathState.of(-1));
    }

    @Test
    void aTargetIsOptimizedForEveryVolumeUnlessItSaysOtherwise() {
        TargetHandler plain = new TargetHandler() {
            @Override
            public List<VolumeInfo> volumes() {
                return List.of(new VolumeInfo("v", 8, F));
            }

            @Override
            public void execute(BlockRequest request, PiDuty duty, java.util.function.Consumer<Completion> done) {
                done.accept(Completion.success());
            }
        };
        assertEquals(PathState.OPTIMIZED, plain.pathState("v"));
    }
}
