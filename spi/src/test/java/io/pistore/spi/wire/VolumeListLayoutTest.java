package io.pistore.spi.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The volume list byte for byte (docs/PROTOCOL-TCP.md), each refusal's reason, and the limits at
 * their edges.
 */
class VolumeListLayoutTest {
    /** The fixed part of an entry: u32 id, u64 blocks, u32 data, u16 meta, u8 guard, type, flags, name length. */
    private static final int FIXED = 22;

    private static VolumeListCodec.Entry entry(int id, String name, long blocks, BlockFormat f) {
        return new VolumeListCodec.Entry(id, new VolumeInfo(name, blocks, f));
    }

    /** One entry written by hand from the layout. */
    private static byte[] entryBytes(int id, long blocks, int ds, int ms, int guard, int type, int flags, String name) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(FIXED + n.length).putInt(id).putLong(blocks).putInt(ds).putShort((short) ms)
                .put((byte) guard).put((byte) type).put((byte) flags).put((byte) n.length).put(n).array();
    }

    private static byte[] list(byte[]... entries) {
        int size = 4;
        for (byte[] e : entries) {
            size += e.length;
        }
        ByteBuffer b = ByteBuffer.allocate(size).putInt(entries.length);
        for (byte[] e : entries) {
            b.put(e);
        }
        return b.array();
    }

    private static String refusal(byte[] b, int maxVolumes) {
        return assertThrows(VolumeListCodec.MalformedListException.class,
                () -> VolumeListCodec.decode(ByteBuffer.wrap(b), maxVolumes)).getMessage();
    }

    @Test
    void eachGuardTypeAndLocationHasItsCode() throws Exception {
        List<VolumeListCodec.Entry> vols = List.of(
                entry(1, "a", 10, BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST)),
                entry(2, "bb", 20, BlockFormat.of(4096, 8, GuardType.IP_CHECKSUM, PiType.TYPE_2, PiLocation.LAST)),
                entry(3, "ccc", 30, BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_3, PiLocation.FIRST)),
                entry(-4, "d", 1L << 40, BlockFormat.of(8192, 64, GuardType.CRC64, PiType.TYPE_1, PiLocation.LAST)),
                entry(5, "e", 1, BlockFormat.of(4096, 0)));
        byte[] expected = list(
                entryBytes(1, 10, 512, 8, 0, 1, 0, "a"),
                entryBytes(2, 20, 4096, 8, 1, 2, 1, "bb"),
                entryBytes(3, 30, 4096, 16, 2, 3, 0, "ccc"),
                entryBytes(-4, 1L << 40, 8192, 64, 3, 1, 1, "d"),
                entryBytes(5, 1, 4096, 0, 0, 0, 0, "e"));
        assertArrayEquals(expected, VolumeListCodec.encode(vols, Integer.MAX_VALUE, 100));
        assertEquals(vols, VolumeListCodec.decode(ByteBuffer.wrap(expected), 5));
        assertEquals(FIXED + 3, VolumeListCodec.encodedSize(vols.get(2).info()));
    }

    @Test
    void aReadOnlyVolumeHasFlagBitOne() throws Exception {
        BlockFormat last = BlockFormat.of(4096, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.LAST);
        List<VolumeListCodec.Entry> vols = List.of(
                new VolumeListCodec.Entry(1, new VolumeInfo("ro", 8, BlockFormat.of(512, 8), true)),
                new VolumeListCodec.Entry(2, new VolumeInfo("ro-last", 8, last).asReadOnly()));
        byte[] expected = list(entryBytes(1, 8, 512, 8, 0, 1, 2, "ro"), entryBytes(2, 8, 4096, 8, 0, 1, 3, "ro-last"));
        assertArrayEquals(expected, VolumeListCodec.encode(vols, Integer.MAX_VALUE, 100));
        List<VolumeListCodec.Entry> back = VolumeListCodec.decode(ByteBuffer.wrap(expected), 5);
        assertEquals(vols, back);
        assertEquals(true, back.get(1).info().readOnly());
        assertEquals(PiLocation.LAST, back.get(1).info().format().location());
    }

    @Test
    void namesOfOneToSixtyFourBytesAreListed() throws Exception {
        BlockFormat f = BlockFormat.of(512, 8);
        List<VolumeListCodec.Entry> vols = List.of(entry(1, "", 8, f), entry(2, "x".repeat(64), 8, f),
                entry(3, "y".repeat(65), 8, f), entry(4, "z", 8, f));
        assertEquals(List.of(vols.get(1), vols.get(3)),
                VolumeListCodec.decode(ByteBuffer.wrap(VolumeListCodec.encode(vols, 1 << 20, 100)), 100));
        assertArrayEquals(new byte[4], VolumeListCodec.encode(vols, 1 << 20, 0), "no volume: the count alone");
        // A byte limit that leaves out the first volume still lists a later one that fits.
        List<VolumeListCodec.Entry> bigThenSmall = List.of(entry(1, "x".repeat(40), 8, f), entry(2, "s", 8, f));
        assertEquals(List.of(bigThenSmall.get(1)), VolumeListCodec.decode(ByteBuffer.wrap(
                VolumeListCodec.encode(bigThenSmall, 4 + FIXED + 1, 100)), 100));
    }

    @Test
    void refusalsSayWhatIsWrong() {
        assertEquals("volume list of 3 bytes has no count", refusal(new byte[3], 10));
        byte[] good = list(entryBytes(1, 8, 4096, 8, 0, 1, 0, "v"));
        assertEquals("volume list claims 1 volumes in " + (FIXED + 1) + " bytes", refusal(good, 0));
        assertEquals("volume list claims 4294967295 volumes in " + (FIXED + 1) + " bytes",
                refusal(ByteBuffer.wrap(good.clone()).putInt(0, -1).array(), Integer.MAX_VALUE));
        // two entries cannot fit in the bytes of one: refused before any entry is read
        assertEquals("volume list claims 2 volumes in " + (FIXED + 1) + " bytes",
                refusal(ByteBuffer.wrap(good.clone()).putInt(0, 2).array(), 10));
        assertEquals("volume list entry 0 has guard 4, type 1, flags 0x0, 8 blocks",
                refusal(list(entryBytes(1, 8, 4096, 8, 4, 1, 0, "v")), 10));
        assertEquals("volume list entry 0 has guard 0, type 4, flags 0x0, 8 blocks",
                refusal(list(entryBytes(1, 8, 4096, 8, 0, 4, 0, "v")), 10));
        assertEquals("volume list entry 0 has guard 0, type 1, flags 0x4, 8 blocks",
                refusal(list(entryBytes(1, 8, 4096, 8, 0, 1, 4, "v")), 10));
        assertEquals("volume list entry 0 has guard 0, type 1, flags 0x0, -1 blocks",
                refusal(list(entryBytes(1, -1, 4096, 8, 0, 1, 0, "v")), 10));
        assertEquals("volume list entry 1 has a name of 0 bytes",
                refusal(list(entryBytes(1, 8, 4096, 8, 0, 1, 0, "v"), entryBytes(2, 8, 4096, 8, 0, 1, 0, "")), 10));
        assertEquals("volume list entry 0: data size must be a power of two from 512 to 65536 bytes, not 1000",
                refusal(list(entryBytes(1, 8, 1000, 8, 0, 1, 0, "v")), 10));
        byte[] trailing = java.util.Arrays.copyOf(good, good.length + 2);
        assertEquals("volume list has 2 bytes after its last entry", refusal(trailing, 10));
    }

    @Test
    void lengthsAreCheckedAtTheirEdges() throws Exception {
        // The highest legal codes decode: crc64, Type 3, PI last.
        assertEquals(1, VolumeListCodec.decode(ByteBuffer.wrap(list(entryBytes(1, 1, 4096, 16, 3, 3, 1, "v"))), 1)
                .size());
        // A count whose fixed parts exactly fill the bytes passes the first check; the name then does not fit.
        byte[] exact = ByteBuffer.allocate(4 + FIXED).putInt(1).putInt(1).putLong(8).putInt(4096).putShort((short) 8)
                .put((byte) 0).put((byte) 1).put((byte) 0).put((byte) 1).array();
        assertEquals("volume list entry 0 has a name of 1 bytes", refusal(exact, 1));
        // A name that ends exactly at the end of the list is whole.
        byte[] one = list(entryBytes(1, 8, 4096, 8, 0, 1, 0, "v"));
        assertEquals("v", VolumeListCodec.decode(ByteBuffer.wrap(one), 1).get(0).info().name());
        // The second entry's fixed part runs past the end: the reason names it.
        byte[] two = list(entryBytes(1, 8, 4096, 8, 0, 1, 0, "x".repeat(30)), entryBytes(2, 8, 4096, 8, 0, 1, 0, "v"));
        byte[] cut = java.util.Arrays.copyOf(two, 4 + FIXED + 30 + FIXED - 1);
        assertEquals("volume list ends inside entry 1", refusal(cut, 2));
        byte[] name65 = list(entryBytes(1, 8, 4096, 8, 0, 1, 0, "x".repeat(65)));
        assertEquals("volume list entry 0 has a name of 65 bytes", refusal(name65, 1));
        byte[] name64 = list(entryBytes(1, 8, 4096, 8, 0, 1, 0, "x".repeat(64)));
        assertEquals(64, VolumeListCodec.decode(ByteBuffer.wrap(name64), 1).get(0).info().name().length());
    }
}
