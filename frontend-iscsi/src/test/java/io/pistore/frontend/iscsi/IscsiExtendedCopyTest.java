package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * EXTENDED COPY and RECEIVE COPY RESULTS through a hand-written initiator, on units whose transfer
 * limit is 64 blocks so that a segment goes in several requests: copies read back byte for byte
 * (the destination's PI generated for its own LBAs), an overlapping copy forward and backward, a
 * descriptor naming no unit of the server or an index past the list aborted, the copy status kept for a held
 * list ID and gone with the nexus, the operating parameters and the third-party copy VPD page.
 */
@Timeout(60)
class IscsiExtendedCopyTest extends IscsiLoopbackFixture {
    @Override
    void createVolumes() throws IOException {
        super.createVolumes();
        store.create("w", BlockFormat.of(512, 8), 1024);
    }

    @Override
    IscsiServer.Options options() {
        return super.options().maxTransferBytes(65536);
    }

    IscsiTestInitiator open(String volume) throws IOException {
        return login(volume, "ImmediateData", "Yes");
    }

    /** The unit's NAA designation descriptor (12 bytes) from its device identification page. */
    static byte[] naa(IscsiTestInitiator c) throws IOException {
        byte[] p = c.command(new byte[] {0x12, 1, (byte) 0x83, 0, (byte) 255, 0}, new byte[0], 0, 255, true).dataIn();
        assertEquals(0x03, p[5] & 0x0f, "the first designator is the NAA one");
        return Arrays.copyOfRange(p, 4, 16);
    }

    /** A parameter list: identification target descriptors for {@code targets}, block-to-block segments. */
    static byte[] list(int listId, int usage, byte[][] targets, long[][] segments) {
        byte[] p = new byte[16 + 32 * targets.length + 28 * segments.length];
        p[0] = (byte) listId;
        p[1] = (byte) (usage << 3);
        p[3] = (byte) (32 * targets.length);
        Pdu.putInt(p, 8, 28 * segments.length);
        for (int t = 0; t < targets.length; t++) {
            int at = 16 + 32 * t;
            p[at] = (byte) 0xE4;
            System.arraycopy(targets[t], 0, p, at + 4, targets[t].length);
            p[at + 30] = 0x02; // disk block length 512
        }
        for (int s = 0; s < segments.length; s++) {
            int at = 16 + 32 * targets.length + 28 * s;
            p[at] = 0x02;
            p[at + 3] = 0x18;
            p[at + 5] = (byte) segments[s][0]; // source target index
            p[at + 7] = (byte) segments[s][1]; // destination target index
            p[at + 10] = (byte) (segments[s][2] >>> 8);
            p[at + 11] = (byte) segments[s][2];
            Pdu.putLong(p, at + 12, segments[s][3]);
            Pdu.putLong(p, at + 20, segments[s][4]);
        }
        return p;
    }

    static IscsiTestInitiator.Result xcopy(IscsiTestInitiator c, byte[] list) throws IOException {
        byte[] cdb = new byte[16];
        cdb[0] = (byte) 0x83;
        Pdu.putInt(cdb, 10, list.length);
        return c.command(cdb, list, list.length, list.length, false);
    }

    static IscsiTestInitiator.Result results(IscsiTestInitiator c, int sa, int listId) throws IOException {
        byte[] cdb = new byte[16];
        cdb[0] = (byte) 0x84;
        cdb[1] = (byte) sa;
        cdb[2] = (byte) listId;
        Pdu.putInt(cdb, 10, 1024);
        return c.command(cdb, new byte[0], 0, 1024, true);
    }

    static byte[] pattern(int n, long seed) {
        byte[] b = new byte[n * 512];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }

    static void write(IscsiTestInitiator c, long lba, byte[] data) throws IOException {
        for (int done = 0; done < data.length / 512; done += 64) {
            int n = Math.min(64, data.length / 512 - done);
            byte[] part = Arrays.copyOfRange(data, done * 512, (done + n) * 512);
            assertEquals(GOOD, c.command(cdb10(0x2A, lba + done, n), part, part.length, part.length, false).status());
        }
    }

    static byte[] read(IscsiTestInitiator c, long lba, int blocks) throws IOException {
        byte[] out = new byte[blocks * 512];
        for (int done = 0; done < blocks; done += 64) {
            int n = Math.min(64, blocks - done);
            IscsiTestInitiator.Result r = c.command(cdb10(0x28, lba + done, n), new byte[0], 0, n * 512L, true);
            assertEquals(GOOD, r.status());
            System.arraycopy(r.dataIn(), 0, out, done * 512, n * 512);
        }
        return out;
    }

    @Test
    void copiesWithinTheUnitInRequestsOfTheTransferLimit() throws Exception {
        try (IscsiTestInitiator c = open("w")) {
            byte[] me = naa(c);
            byte[] data = pattern(300, 1);
            write(c, 0, data);
            IscsiTestInitiator.Result r = xcopy(c, list(1, 0, new byte[][] {me}, new long[][] {{0, 0, 300, 0, 600}}));
            assertEquals(GOOD, r.status(), () -> "sense " + Integer.toHexString(r.ascq()));
            assertArrayEquals(data, read(c, 600, 300));
            // the destination's PI is its own: RDPROTECT 1 checks the reference tags against LBAs 600...
            byte[] withPi = new byte[16];
            withPi[0] = (byte) 0x88;
            withPi[1] = 1 << 5;
            Pdu.putLong(withPi, 2, 600);
            Pdu.putInt(withPi, 10, 64);
            assertEquals(GOOD, c.command(withPi, new byte[0], 0, 64 * 520, true).status());

            // overlapping: forward (the destination before the source) and backward (after it)
            assertEquals(GOOD, xcopy(c, list(2, 2, new byte[][] {me}, new long[][] {{0, 0, 300, 600, 500}})).status());
            assertArrayEquals(data, read(c, 500, 300));
            write(c, 0, data);
            assertEquals(GOOD, xcopy(c, list(3, 2, new byte[][] {me}, new long[][] {{0, 0, 300, 0, 100}})).status());
            assertArrayEquals(data, read(c, 100, 300), "a backward copy reads each chunk before it is overwritten");

            byte[] status = results(c, 0, 1).dataIn();
            assertEquals(0x01, status[4] & 0x7f, "completed without errors");
            assertEquals(1, Cdb.u16(status, 5), "segments processed");
            assertEquals(300 * 512 / 1024, Pdu.getInt(status, 8), "KiB copied");
            assertEquals(0x2400, results(c, 0, 2).ascq(), "list ID 2 was not held (usage 10b)");
        }
        try (IscsiTestInitiator again = open("w")) {
            assertEquals(0x2400, results(again, 0, 1).ascq(), "the status went with the nexus");
        }
    }

    @Test
    void refusesWhatItCannotCopy() throws Exception {
        try (IscsiTestInitiator c = open("w")) {
            byte[] me = naa(c);
            byte[] other = me.clone();
            other[11] ^= 1; // a designator no unit of the server has
            write(c, 0, pattern(8, 2));
            byte[] before = read(c, 900, 8);
            IscsiTestInitiator.Result r = xcopy(c, list(1, 0, new byte[][] {me, other}, new long[][] {{0, 1, 8, 0, 0}}));
            assertEquals(0x0A, r.senseKey(), "COPY ABORTED");
            assertEquals(0x0D02, r.ascq(), "no such unit: COPY TARGET DEVICE NOT REACHABLE");
            assertEquals(0x0D02, xcopy(c, list(1, 0, new byte[][] {me}, new long[][] {{0, 3, 8, 0, 900}})).ascq(),
                    "an index past the target list");
            r = xcopy(c, list(1, 0, new byte[][] {me}, new long[][] {{0, 0, 8, 0, 1020}}));
            assertEquals(0x0A, r.senseKey(), "past the end");
            assertArrayEquals(before, read(c, 900, 8), "nothing written");
            assertEquals(0x02, results(c, 0, 1).dataIn()[4] & 0x7f, "the held status says it failed");

            byte[] bad = list(1, 0, new byte[][] {me}, new long[][] {{0, 0, 8, 0, 900}});
            bad[16] = (byte) 0xE0;
            assertEquals(0x2607, xcopy(c, bad).ascq(), "a Fibre Channel target descriptor");
            bad = list(1, 0, new byte[][] {me}, new long[][] {{0, 0, 8, 0, 900}});
            bad[48] = 0x03;
            assertEquals(0x2609, xcopy(c, bad).ascq(), "a stream-to-stream segment");
            byte[][] five = {me, me, me, me, me};
            assertEquals(0x2606, xcopy(c, list(1, 0, five, new long[][] {{0, 0, 1, 0, 900}})).ascq());
            long[][] seventeen = new long[17][];
            Arrays.fill(seventeen, new long[] {0, 0, 1, 0, 900});
            assertEquals(0x2608, xcopy(c, list(1, 0, new byte[][] {me}, seventeen)).ascq());
            byte[] cut = list(1, 0, new byte[][] {me}, new long[][] {{0, 0, 8, 0, 900}});
            assertEquals(0x1A00, xcopy(c, Arrays.copyOf(cut, cut.length - 1)).ascq(), "parameter list cut short");
            assertEquals(GOOD, xcopy(c, new byte[0]).status(), "an empty parameter list copies nothing");
            assertArrayEquals(before, read(c, 900, 8));
        }
    }

    /**
     * Hostile parameter lists: random bytes, and well-formed lists with random fields (descriptor
     * types, lengths, indexes, block counts, LBAs, list lengths that disagree with the CDB). Each
     * command is answered with a status on the same connection, none of them an internal failure, and
     * a good copy still works after them.
     */
    @Test
    void randomParameterListsAreAnsweredAndLeaveTheUnitWorking() throws Exception {
        java.util.Random r = new java.util.Random(0x3C0);
        try (IscsiTestInitiator c = open("w")) {
            byte[] me = naa(c);
            for (int i = 0; i < 400; i++) {
                byte[] p;
                if (i % 4 == 0) {
                    p = new byte[r.nextInt(600)];
                    r.nextBytes(p);
                } else {
                    long[][] segs = new long[1 + r.nextInt(3)][];
                    for (int k = 0; k < segs.length; k++) {
                        segs[k] = new long[] {r.nextInt(3), r.nextInt(3), r.nextInt(70000), r.nextInt(1100) - 50,
                            r.nextInt(1000) - 50};
                    }
                    p = list(r.nextInt(256), r.nextInt(4), new byte[][] {me, r.nextBoolean() ? me : new byte[12]}, segs);
                    for (int flips = r.nextInt(4); flips > 0; flips--) {
                        p[r.nextInt(p.length)] = (byte) r.nextInt(256);
                    }
                    if (i % 4 == 1) { // cut inside the segment descriptors, the header saying so
                        int targetsEnd = 16 + 64;
                        p = java.util.Arrays.copyOf(p, targetsEnd + r.nextInt(p.length - targetsEnd + 1));
                        Pdu.putInt(p, 8, p.length - targetsEnd);
                    }
                }
                byte[] cdb = new byte[16];
                cdb[0] = (byte) 0x83;
                Pdu.putInt(cdb, 10, r.nextInt(8) == 0 ? r.nextInt(1 << 20) : p.length);
                IscsiTestInitiator.Result res = c.command(cdb, p, p.length, p.length, false);
                assertTrue(res.status() == GOOD || res.status() == CHECK, "list " + i + ": status " + res.status());
                assertTrue(res.status() == GOOD || res.senseKey() != ScsiResult.HARDWARE_ERROR,
                        "list " + i + " broke the copy manager: " + log);
            }
            byte[] data = pattern(16, 6);
            write(c, 0, data);
            assertEquals(GOOD, xcopy(c, list(1, 2, new byte[][] {me}, new long[][] {{0, 0, 16, 0, 800}})).status());
            assertArrayEquals(data, read(c, 800, 16), "a good copy after the hostile ones");
            assertEquals(GOOD, tur(c).status(), "the session goes on");
        }
    }

    @Test
    void operatingParametersAndTheThirdPartyCopyPage() throws Exception {
        try (IscsiTestInitiator c = open("w")) {
            byte[] op = results(c, 3, 0).dataIn();
            assertEquals(op.length - 4, Pdu.getInt(op, 0));
            assertEquals(ScsiExtendedCopy.MAX_TARGETS, Cdb.u16(op, 8));
            assertEquals(ScsiExtendedCopy.MAX_SEGMENTS, Cdb.u16(op, 10));
            assertEquals(ScsiExtendedCopy.MAX_DESCRIPTOR_LIST, Pdu.getInt(op, 12));
            assertEquals(2, op[43]);
            assertEquals(0x02, op[44]);
            assertEquals((byte) 0xE4, op[45]);
            byte[] pages = c.command(new byte[] {0x12, 1, 0, 0, (byte) 255, 0}, new byte[0], 0, 255, true).dataIn();
            assertTrue(new String(pages, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf((char) 0x8F) >= 4);
            byte[] tpc = c.command(new byte[] {0x12, 1, (byte) 0x8F, 0, (byte) 255, 0}, new byte[0], 0, 255, true).dataIn();
            assertEquals(0x0001, Cdb.u16(tpc, 4), "supported commands descriptor");
            assertEquals(0x83, tpc[9] & 0xff);
            assertEquals(0x84, tpc[12] & 0xff);
        }
    }
}
