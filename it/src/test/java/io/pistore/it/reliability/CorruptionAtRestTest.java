package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corruption at rest: a file volume (4096+8, Type 1) is written, closed, and damaged on disk — a data
 * bit, a guard bit, a reference tag bit, a sector of garbage, one block's data+PI copied over another
 * (a misdirected write), a data bit in a never-written block — then reopened. Reads of exactly those
 * LBAs fail with guard or ref-tag errors naming the LBA, {@code pistore scrub} lists exactly those
 * LBAs, and every other block reads back as written. An application-tag bit is checked apart: the
 * app tag belongs to the writer, so only a reader that asks for it sees it; data stays intact.
 */
class CorruptionAtRestTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);
    static final int BLOCKS = 256;
    static final int WRITTEN = 200; // 200..255 stay unwritten

    @TempDir
    Path dir;

    static byte[] content(long lba) {
        byte[] b = new byte[F.dataSize()];
        new Random(lba * 7919 + 1).nextBytes(b);
        return b;
    }

    @Test
    void damagedBlocksFailWithTheirLbaAndScrubListsExactlyThem() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v", F, BLOCKS);
            TargetService t = new TargetService(s);
            for (long lba = 0; lba < WRITTEN; lba++) {
                Completion c = t.executeNow(BlockRequest.write("v", lba, 1, ScatterList.wrap(content(lba)), null,
                        Protection.insertStrip(lba), false));
                assertTrue(c.isSuccess(), c.toString());
            }
            t.executeNow(BlockRequest.flush("v"));
        }
        Map<Long, Status> expected = new TreeMap<>();
        Random rnd = new Random(42);
        try (RandomAccessFile data = new RandomAccessFile(dir.resolve("v.data").toFile(), "rw");
             RandomAccessFile meta = new RandomAccessFile(dir.resolve("v.meta").toFile(), "rw")) {
            flip(data, 10L * 4096 + rnd.nextInt(4096), rnd.nextInt(8));
            expected.put(10L, Status.GUARD_CHECK);
            flip(meta, 20L * 8 + rnd.nextInt(2), rnd.nextInt(8)); // guard
            expected.put(20L, Status.GUARD_CHECK);
            flip(meta, 30L * 8 + 4 + rnd.nextInt(4), rnd.nextInt(8)); // ref tag
            expected.put(30L, Status.REF_TAG_CHECK);
            copyBlock(data, meta, 45, 40); // misdirected write: 45's data and PI land on 40
            expected.put(40L, Status.REF_TAG_CHECK);
            byte[] junk = new byte[512];
            rnd.nextBytes(junk);
            data.seek(60L * 4096 + 1024);
            data.write(junk);
            expected.put(60L, Status.GUARD_CHECK);
            flip(data, 210L * 4096 + rnd.nextInt(4096), rnd.nextInt(8)); // in a never-written block
            expected.put(210L, Status.GUARD_CHECK);
            flip(meta, 50L * 8 + 2 + rnd.nextInt(2), rnd.nextInt(8)); // app tag: not a data corruption
        }

        try (VolumeStore s = VolumeStore.open(dir)) {
            TargetService t = new TargetService(s);
            int good = 0;
            for (long lba = 0; lba < BLOCKS; lba++) {
                ByteBuffer d = ByteBuffer.allocate(F.dataSize());
                Completion c = t.executeNow(BlockRequest.read("v", lba, 1, ScatterList.of(d), null,
                        Protection.insertStrip(lba)));
                Status want = expected.getOrDefault(lba, Status.SUCCESS);
                assertEquals(want, c.status(), "lba " + lba + ": " + c);
                if (c.isSuccess()) {
                    assertArrayEquals(lba < WRITTEN ? content(lba) : new byte[F.dataSize()], d.array(), "lba " + lba);
                    good++;
                } else {
                    assertEquals(lba, c.errorLba(), c.toString());
                }
            }
            // A reader that checks the application tag sees the flipped one; the data is intact.
            ByteBuffer d = ByteBuffer.allocate(F.dataSize());
            Completion c = t.executeNow(BlockRequest.read("v", 50, 1, ScatterList.of(d), null,
                    new Protection(true, CheckFlags.ALL, 50, 0, 0xFFFF)));
            assertEquals(Status.APP_TAG_CHECK, c.status(), c.toString());
            Figures.record("at-rest", "blocks=" + BLOCKS + " damaged=" + expected.size() + " failing_reads="
                    + (BLOCKS - good) + " other_blocks_intact=" + good + " app_tag_flip_seen_by_app_check=1");
        }

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), "scrub", "--data", dir.toString(), "v");
        Map<Long, String> listed = new TreeMap<>();
        Matcher m = Pattern.compile("lba=(\\d+) error=(\\w+)").matcher(out.toString());
        while (m.find()) {
            listed.put(Long.parseLong(m.group(1)), m.group(2));
        }
        assertEquals(1, rc, out + "\n" + err);
        assertEquals(expected.keySet(), listed.keySet(), out.toString());
        for (Map.Entry<Long, Status> e : expected.entrySet()) {
            assertEquals(e.getValue() == Status.GUARD_CHECK ? "guard" : "ref", listed.get(e.getKey()), out.toString());
        }
        Figures.record("at-rest", "scrub listed " + listed);
    }

    static void flip(RandomAccessFile f, long offset, int bit) throws Exception {
        f.seek(offset);
        int b = f.read();
        f.seek(offset);
        f.write(b ^ (1 << bit));
    }

    static void copyBlock(RandomAccessFile data, RandomAccessFile meta, long from, long to) throws Exception {
        byte[] d = new byte[4096];
        data.seek(from * 4096);
        data.readFully(d);
        data.seek(to * 4096);
        data.write(d);
        byte[] m = new byte[8];
        meta.seek(from * 8);
        meta.readFully(m);
        meta.seek(to * 8);
        meta.write(m);
    }
}
