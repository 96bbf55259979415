package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * COMPARE AND WRITE on a PI volume through a hand-written initiator: equal blocks are replaced, a
 * difference answers MISCOMPARE with the offset of its first byte and writes nothing, a Data-Out of
 * the wrong size or too many blocks is refused; the range lock that makes it atomic against other
 * writes; MODE SELECT taking back what MODE SENSE reported and refusing any change.
 */
@Timeout(60)
class IscsiCompareAndWriteTest extends IscsiLoopbackFixture {
    IscsiTestInitiator open() throws IOException {
        return login("v", "ImmediateData", "Yes");
    }

    static byte[] caw(long lba, int blocks) {
        byte[] c = new byte[16];
        c[0] = (byte) 0x89;
        Pdu.putLong(c, 2, lba);
        c[13] = (byte) blocks;
        return c;
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    static byte[] read(IscsiTestInitiator c, long lba, int blocks) throws IOException {
        IscsiTestInitiator.Result r = c.command(cdb10(0x28, lba, blocks), new byte[0], 0, blocks * 512L, true);
        assertEquals(0, r.status());
        return r.dataIn();
    }

    @Test
    void comparesThenWritesOrWritesNothing() throws Exception {
        try (IscsiTestInitiator c = open()) {
            byte[] old = concat(block(1), block(2));
            assertEquals(0, c.command(cdb10(0x2A, 10, 2), old, old.length, old.length, false).status());
            byte[] fresh = concat(block(3), block(4));
            byte[] both = concat(old, fresh);
            assertEquals(0, c.command(caw(10, 2), both, both.length, both.length, false).status());
            assertArrayEquals(fresh, read(c, 10, 2));

            byte[] wrong = concat(fresh, old);
            wrong[700] ^= 1;
            IscsiTestInitiator.Result miscompare = c.command(caw(10, 2), wrong, wrong.length, wrong.length, false);
            assertEquals(2, miscompare.status());
            assertEquals(ScsiResult.MISCOMPARE, miscompare.senseKey());
            assertEquals(0x1D00, miscompare.ascq());
            assertEquals(700, miscompare.information(), "offset of the first differing byte");
            assertArrayEquals(fresh, read(c, 10, 2), "nothing written");

            IscsiTestInitiator.Result size = c.command(caw(10, 1), both, both.length, both.length, false);
            assertEquals(0x2400, size.ascq(), "a Data-Out of four blocks for one");
            IscsiTestInitiator.Result eol = c.command(caw(63, 2), both, both.length, both.length, false);
            assertEquals(0x2100, eol.ascq());
            byte[] limits = c.command(new byte[] {0x12, 1, (byte) 0xB0, 0, 64, 0}, new byte[0], 0, 64, true).dataIn();
            assertEquals(ScsiCompareAndWrite.MAX_BLOCKS, limits[5] & 0xff, "MAXIMUM COMPARE AND WRITE LENGTH");
        }
    }

    @Test
    void theRangeLockKeepsWritesOutOfAnExclusiveRangeOnly() throws Exception {
        ScsiRangeLock lock = new ScsiRangeLock();
        ScsiRangeLock.Range caw = lock.lock(0, 8, true);
        CompletableFuture<ScsiRangeLock.Range> overlapping = CompletableFuture.supplyAsync(() -> {
            try {
                return lock.lock(4, 1, false);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Eventually.await("the overlapping write waits", () -> lock.size() == 2);
        ScsiRangeLock.Range beside = lock.lock(8, 8, false);
        ScsiRangeLock.Range shared = lock.lock(8, 1, false);
        assertFalse(overlapping.isDone(), "a write inside the held range waits");
        lock.unlock(caw);
        lock.unlock(overlapping.get(30, TimeUnit.SECONDS));
        lock.unlock(beside);
        lock.unlock(shared);
        assertEquals(0, lock.size());
    }

    @Test
    void modeSelectTakesTheCurrentValuesAndRefusesChanges() throws Exception {
        try (IscsiTestInitiator c = open()) {
            byte[] sense10 = {0x5A, 0, 0x3F, 0, 0, 0, 0, 0, (byte) 200, 0};
            byte[] current = c.command(sense10, new byte[0], 0, 200, true).dataIn();
            current[0] = 0;
            current[1] = 0; // mode data length is reserved in MODE SELECT
            current[3] = 0; // and so is the device-specific parameter
            byte[] select10 = {0x55, 0x10, 0, 0, 0, 0, 0, 0, (byte) current.length, 0};
            assertEquals(0, c.command(select10, current, current.length, current.length, false).status());

            byte[] changed = current.clone();
            changed[8 + 8 + 2] ^= 0x04; // WCE of the caching page, after the header and block descriptor
            IscsiTestInitiator.Result refused = c.command(select10, changed, changed.length, changed.length, false);
            assertEquals(2, refused.status());
            assertEquals(0x2600, refused.ascq(), "invalid field in parameter list");

            byte[] save = select10.clone();
            save[1] |= 0x01;
            assertEquals(0x2400, c.command(save, current, current.length, current.length, false).ascq(), "SP");

            byte[] sense6 = {0x1A, 0x08, 0x0A, 0, (byte) 100, 0};
            byte[] control = c.command(sense6, new byte[0], 0, 100, true).dataIn();
            control[0] = 0;
            control[2] = 0;
            byte[] select6 = {0x15, 0x10, 0, 0, (byte) control.length, 0};
            assertEquals(0, c.command(select6, control, control.length, control.length, false).status());
        }
    }
}
