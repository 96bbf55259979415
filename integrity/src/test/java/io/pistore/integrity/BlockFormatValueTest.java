package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockFormat} as a value and as text: equality over every field, the defaults of
 * {@code of(DATA, META)} and {@code parse} at the 16-byte edge, the sizes grammar, and the
 * reference tag of an LBA at each guard's width (32, 64 and 48 bits).
 */
class BlockFormatValueTest {

    @Test
    void formatsAreEqualExactlyWhenEveryFieldIs() {
        List<BlockFormat> all = new ArrayList<>();
        for (int ds : new int[] {512, 4096}) {
            for (int ms : new int[] {16, 64}) {
                for (GuardType g : GuardType.values()) {
                    for (PiType t : PiType.values()) {
                        for (PiLocation l : PiLocation.values()) {
                            all.add(BlockFormat.of(ds == 512 && g.tupleSize() == 16 ? 4096 : ds, ms, g, t, l));
                        }
                    }
                }
            }
        }
        Set<BlockFormat> distinct = new HashSet<>(all);
        Set<String> texts = new HashSet<>();
        for (BlockFormat f : all) {
            texts.add(f.toString());
            BlockFormat copy = BlockFormat.of(f.dataSize(), f.metadataSize(), f.guard(), f.type(), f.location());
            assertEquals(f, copy);
            assertEquals(f.hashCode(), copy.hashCode());
            assertEquals(f, f);
        }
        assertEquals(texts.size(), distinct.size(), "equal exactly when the text (every field) is equal");
        BlockFormat f = BlockFormat.of(4096, 16, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
        assertNotEquals(f, BlockFormat.of(512, 16, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST));
        assertNotEquals(f, BlockFormat.of(4096, 64, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST));
        assertNotEquals(f, f.withGuard(GuardType.IP_CHECKSUM));
        assertNotEquals(f, f.withType(PiType.TYPE_2));
        assertNotEquals(f, f.withLocation(PiLocation.LAST));
        assertNotEquals(f, "4096+16");
        assertNotEquals(f, null);
        // the hash spreads: formats differing in one field rarely share it
        Set<Integer> hashes = new HashSet<>();
        for (BlockFormat x : distinct) {
            hashes.add(x.hashCode());
        }
        assertEquals(distinct.size(), hashes.size(), "no two of these formats share a hash");
    }

    @Test
    void theDefaultsChangeAtSixteenBytesOfMetadata() {
        assertSame(GuardType.CRC16, BlockFormat.defaultGuard(15));
        assertSame(GuardType.CRC64, BlockFormat.defaultGuard(16));
        assertEquals("4096+15 type=1 guard=crc16 pi=first", BlockFormat.of(4096, 15).toString());
        assertEquals("4096+16 type=1 guard=crc64 pi=first", BlockFormat.of(4096, 16).toString());
        assertEquals("512+0 type=0 guard=crc16 pi=first", BlockFormat.of(512, 0).toString());
        assertEquals("512+8 type=1 guard=crc16 pi=first", BlockFormat.of(512, 8).toString());
        assertEquals("4096+8", BlockFormat.of(4096, 8).sizes());
    }

    @Test
    void sizesParseWithOrWithoutMetadataAndKibibytes() {
        assertArrayEquals(new int[] {4096, 8}, BlockFormat.parseSizes("4096+8"));
        assertArrayEquals(new int[] {4096, 16}, BlockFormat.parseSizes(" 4k + 16 "));
        assertArrayEquals(new int[] {512, 0}, BlockFormat.parseSizes("512"));
        assertArrayEquals(new int[] {1024, 0}, BlockFormat.parseSizes("1K+0"));
        assertArrayEquals(new int[] {8, 4096}, BlockFormat.parseSizes("8+4k"), "the plus at any place");
        assertEquals(BlockFormat.of(4096, 64), BlockFormat.parse("4k+64"));
        assertEquals(BlockFormat.of(512, 0), BlockFormat.parse("512"));
        for (String bad : new String[] {"+8", "4096+", "x+8", "4096+8+8", "k+8", "3000000k+8", ""}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BlockFormat.parseSizes(bad),
                    bad);
            assertEquals("format must look like DATA+META, e.g. 4096+8, not '" + bad + "'", e.getMessage());
        }
    }

    @Test
    void theRefTagOfAnLbaIsCutToTheTagsWidth() {
        BlockFormat c16 = BlockFormat.of(4096, 8);
        BlockFormat c32 = BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_1, PiLocation.FIRST);
        BlockFormat c64 = BlockFormat.of(4096, 16);
        long lba = 0x1234_5678_9ABC_DEF0L;
        assertEquals(0x9ABC_DEF0L, c16.refTagOf(lba));
        assertEquals(lba, c32.refTagOf(lba), "the 32b guard's tuple keeps 64 bits of reference tag");
        assertEquals(0x5678_9ABC_DEF0L, c64.refTagOf(lba));
        assertEquals(0, c16.refTagOf(1L << 32));
        assertEquals(0xFFFF_FFFFL, c16.refTagOf(-1));
    }

    @Test
    void guardNamesParseWithTheirAliases() {
        String[][] names = {
            {"crc16", "t10dif", "crc16-t10dif", " CRC16 "},
            {"ip", "ipcsum", "ip-checksum", "csum"},
            {"crc32c", "castagnoli", "CRC32C"},
            {"crc64", "crc64nvme", "crc64-nvme"},
        };
        GuardType[] types = {GuardType.CRC16, GuardType.IP_CHECKSUM, GuardType.CRC32C, GuardType.CRC64};
        for (int i = 0; i < types.length; i++) {
            for (String n : names[i]) {
                assertSame(types[i], GuardType.parse(n), n);
            }
            assertEquals(names[i][0], types[i].cliName());
            assertSame(types[i], GuardType.parse(types[i].cliName()));
        }
        assertEquals("unknown guard 'crc8' (expected crc16, ip, crc32c or crc64)",
                assertThrows(IllegalArgumentException.class, () -> GuardType.parse("crc8")).getMessage());
    }

    @Test
    void aGuardOfABufferDoesNotDependOnItsByteOrder() {
        byte[] raw = new byte[1001];
        new java.util.Random(3).nextBytes(raw);
        for (GuardType g : GuardType.values()) {
            long want = g.compute(raw, 0, raw.length);
            for (boolean direct : new boolean[] {false, true}) {
                java.nio.ByteBuffer b = direct ? java.nio.ByteBuffer.allocateDirect(raw.length)
                        : java.nio.ByteBuffer.allocate(raw.length);
                b.put(raw).flip();
                b.order(java.nio.ByteOrder.LITTLE_ENDIAN);
                assertEquals(want, g.compute(b), g + " direct=" + direct);
                assertEquals(0, b.position(), "the buffer is not moved");
                assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, b.order());
            }
        }
    }
}
