package io.pistore.frontend.iscsi;

import static io.pistore.frontend.iscsi.IscsiExtendedCopyTest.list;
import static io.pistore.frontend.iscsi.IscsiExtendedCopyTest.naa;
import static io.pistore.frontend.iscsi.IscsiExtendedCopyTest.pattern;
import static io.pistore.frontend.iscsi.IscsiExtendedCopyTest.xcopy;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.security.access.AccessRules;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * EXTENDED COPY between two units of one server, as the asking initiator reaches the other unit:
 * copies both ways read back with their PI; a unit its access rules grant read-only is read but not
 * written, one they do not grant is not reachable, another initiator's WRITE EXCLUSIVE reservation
 * holds the copy's writes off and lets its reads through, and units of another block size are refused.
 */
@Timeout(60)
class IscsiCopyBetweenUnitsTest extends IscsiLoopbackFixture {
    private static final String A = "iqn.2026-12.io.pistore:a";
    private static final String B = "iqn.2026-12.io.pistore:b";

    @Override
    void createVolumes() throws IOException {
        super.createVolumes();
        for (String v : new String[] {"w", "x", "r", "hidden"}) {
            store.create(v, BlockFormat.of(512, 8), 1024);
        }
        store.create("k", BlockFormat.of(4096, 8), 128);
    }

    @Override
    IscsiServer.Options options() {
        return super.options().maxTransferBytes(65536).access(AccessRules.parse(List.of(
                A + " w,x,k rw", A + " r ro", B + " w,x,r,hidden,k rw"), "test rules"));
    }

    private IscsiTestInitiator as(String who, String volume) throws IOException {
        return loginAs(who, volume, "ImmediateData", "Yes");
    }

    private static void assertSense(int key, int ascq, IscsiTestInitiator.Result r) {
        assertEquals(CHECK, r.status());
        assertEquals(key, r.senseKey());
        assertEquals(ascq, r.ascq(), Integer.toHexString(r.ascq()));
    }

    /** PERSISTENT RESERVE OUT {@code action} with reservation key {@code key}, service action key {@code serviceKey}. */
    private static int reserveOut(IscsiTestInitiator c, int action, int type, long key, long serviceKey) throws IOException {
        byte[] cdb = new byte[10];
        cdb[0] = 0x5F;
        cdb[1] = (byte) action;
        cdb[2] = (byte) type;
        Pdu.putInt(cdb, 5, 24);
        byte[] p = new byte[24];
        Pdu.putLong(p, 0, key);
        Pdu.putLong(p, 8, serviceKey);
        return c.command(cdb, p, 24, 24, false).status();
    }

    @Test
    void copiesReachAnotherUnitAsTheirInitiatorWould() throws Exception {
        try (IscsiTestInitiator w = as("a", "w"); IscsiTestInitiator x = as("a", "x"); IscsiTestInitiator r = as("a", "r");
             IscsiTestInitiator k = as("a", "k"); IscsiTestInitiator bHidden = as("b", "hidden");
             IscsiTestInitiator bR = as("b", "r"); IscsiTestInitiator bX = as("b", "x")) {
            byte[] naaW = naa(w);
            byte[] naaX = naa(x);
            byte[] naaR = naa(r);
            byte[] naaHidden = naa(bHidden);
            byte[] data = pattern(100, 3);
            IscsiExtendedCopyTest.write(w, 0, data);

            assertEquals(GOOD, xcopy(w, list(1, 0, new byte[][] {naaW, naaX}, new long[][] {{0, 1, 100, 0, 500}})).status());
            assertArrayEquals(data, IscsiExtendedCopyTest.read(x, 500, 100), "read back from the other unit, its PI checked");
            assertEquals(GOOD, xcopy(w, list(1, 0, new byte[][] {naaX, naaW}, new long[][] {{0, 1, 100, 500, 900}})).status(),
                    "from the other unit to this one");
            assertArrayEquals(data, IscsiExtendedCopyTest.read(w, 900, 100));

            // read-only for this initiator: a source, never a destination
            byte[] inR = pattern(8, 4);
            IscsiExtendedCopyTest.write(bR, 16, inR);
            assertSense(ScsiResult.DATA_PROTECT, 0x2700, xcopy(w, list(1, 0, new byte[][] {naaW, naaR},
                    new long[][] {{0, 1, 8, 0, 0}})));
            assertArrayEquals(inR, IscsiExtendedCopyTest.read(bR, 16, 8), "nothing written there");
            assertEquals(GOOD, xcopy(w, list(1, 0, new byte[][] {naaR, naaW}, new long[][] {{0, 1, 8, 16, 300}})).status());
            assertArrayEquals(inR, IscsiExtendedCopyTest.read(w, 300, 8));

            // not granted to this initiator: as if it were not there, either way
            for (long[] segment : new long[][] {{0, 1, 8, 0, 0}, {1, 0, 8, 0, 0}}) {
                IscsiTestInitiator.Result no = xcopy(w, list(1, 0, new byte[][] {naaW, naaHidden}, new long[][] {segment}));
                assertSense(0x0A, 0x0D02, no); // COPY ABORTED, COPY TARGET DEVICE NOT REACHABLE
            }

            // another block size: its descriptor must say it, and a copy between the two is refused
            byte[] naaK = naa(k);
            assertSense(ScsiResult.ILLEGAL_REQUEST, 0x2600, xcopy(w, list(1, 0, new byte[][] {naaW, naaK},
                    new long[][] {{0, 1, 8, 0, 0}})));
            byte[] sized = list(1, 0, new byte[][] {naaW, naaK}, new long[][] {{0, 1, 8, 0, 0}});
            sized[16 + 32 + 30] = 0x10; // the second descriptor's block length 4096
            sized[16 + 32 + 31] = 0x00;
            assertSense(ScsiResult.ILLEGAL_REQUEST, 0x2600, xcopy(w, sized));

            // another initiator's WRITE EXCLUSIVE on the other unit: its reads go, its writes conflict
            assertEquals(GOOD, reserveOut(bX, 0x00, 0, 0, 0xB0B));
            assertEquals(GOOD, reserveOut(bX, 0x01, 1, 0xB0B, 0));
            byte[] before = IscsiExtendedCopyTest.read(x, 700, 8);
            assertEquals(0x18, xcopy(w, list(1, 0, new byte[][] {naaW, naaX}, new long[][] {{0, 1, 8, 0, 700}})).status(),
                    "RESERVATION CONFLICT");
            assertArrayEquals(before, IscsiExtendedCopyTest.read(x, 700, 8), "nothing written there");
            assertEquals(GOOD, xcopy(w, list(1, 0, new byte[][] {naaX, naaW}, new long[][] {{0, 1, 8, 500, 400}})).status());
            assertArrayEquals(java.util.Arrays.copyOf(data, 8 * 512), IscsiExtendedCopyTest.read(w, 400, 8));
        }
    }

    /** READ(16) with RDPROTECT 1 of {@code n} blocks: data and tuples, 520 bytes a block. */
    private static byte[] readWithTuples(IscsiTestInitiator c, long lba, int n) throws IOException {
        IscsiTestInitiator.Result r = c.command(IscsiProtectionTest.cdb16(0x88, lba, n, 1), new byte[0], 0, n * 520L, true);
        assertEquals(GOOD, r.status(), () -> Integer.toHexString(r.ascq()));
        return r.dataIn();
    }

    @Test
    void theInitiatorsTuplesTravelWithTheirBlocks() throws Exception {
        try (IscsiTestInitiator w = as("a", "w"); IscsiTestInitiator x = as("a", "x")) {
            byte[] first = IscsiProtectionTest.blocks(40, 0x1234, 10, 5);
            byte[] second = IscsiProtectionTest.blocks(30, 0x5678, 50, 6);
            assertEquals(GOOD, w.command(IscsiProtectionTest.cdb16(0x8A, 10, 40, 1), first, first.length, first.length,
                    false).status());
            assertEquals(GOOD, w.command(IscsiProtectionTest.cdb16(0x8A, 50, 30, 1), second, second.length, second.length,
                    false).status());
            byte[] unwritten = readWithTuples(w, 80, 20); // never written: zeros under the escape tuple

            // 90 blocks from LBA 10 of w to LBA 200 of x, in two requests of the transfer limit
            assertEquals(GOOD, xcopy(w, list(1, 0, new byte[][] {naa(w), naa(x)}, new long[][] {{0, 1, 90, 10, 200}})).status());
            byte[] back = new byte[90 * 520];
            System.arraycopy(readWithTuples(x, 200, 45), 0, back, 0, 45 * 520);
            System.arraycopy(readWithTuples(x, 245, 45), 0, back, 45 * 520, 45 * 520);
            for (int i = 0; i < 90; i++) {
                byte[] want = i < 40 ? java.util.Arrays.copyOfRange(first, i * 520, i * 520 + 520)
                        : i < 70 ? java.util.Arrays.copyOfRange(second, (i - 40) * 520, (i - 40) * 520 + 520)
                        : java.util.Arrays.copyOfRange(unwritten, (i - 70) * 520, (i - 70) * 520 + 520);
                if (i < 70) {
                    Pdu.putInt(want, 516, 200 + i); // the reference tag follows the block to its new LBA
                }
                assertArrayEquals(want, java.util.Arrays.copyOfRange(back, i * 520, i * 520 + 520), "block " + i);
            }

            // within one unit alike
            assertEquals(GOOD, xcopy(w, list(1, 0, new byte[][] {naa(w)}, new long[][] {{0, 0, 4, 12, 600}})).status());
            byte[] moved = readWithTuples(w, 600, 4);
            for (int i = 0; i < 4; i++) {
                assertEquals(0x1234, Cdb.u16(moved, i * 520 + 514), "application tag kept");
                assertEquals(600 + i, Pdu.getInt(moved, i * 520 + 516), "reference tag of the new LBA");
            }
        }
    }
}
