package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.internal.NativeGuards;
import io.pistore.integrity.reference.ReferenceGuards;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Which guard path this JVM uses, and proof that it is the expected one: with
 * {@code -Dpistore.expectNative=true} (set by .ci/run) the native library must be loaded and bound
 * to CRC-16 and CRC-64; with {@code false} it must not be; otherwise the test only reports.
 * Then PI generate/verify through GuardType on the active path, against the bitwise reference.
 */
class NativePathTest {

    @Test
    void activePathIsTheExpectedOne() {
        String expect = System.getProperty("pistore.expectNative", "auto");
        System.out.println("[pistore] " + NativeGuards.describe() + " (expectNative=" + expect + ")");
        if (expect.equals("true")) {
            assertTrue(NativeGuards.isAvailable(), () -> "native path expected but unavailable: "
                    + NativeGuards.unavailabilityCause());
            assertTrue(GuardType.CRC16.algorithm().name().endsWith("-native"), GuardType.CRC16.algorithm().name());
            assertTrue(GuardType.CRC64.algorithm().name().endsWith("-native"), GuardType.CRC64.algorithm().name());
        } else if (expect.equals("false")) {
            assertFalse(NativeGuards.isAvailable());
            assertNotNull(NativeGuards.unavailabilityCause());
            assertFalse(GuardType.CRC16.algorithm().name().endsWith("-native"));
            assertFalse(GuardType.CRC64.algorithm().name().endsWith("-native"));
        }
    }

    @Test
    void generateAndVerifyOnTheActivePath() {
        SplittableRandom r = new SplittableRandom(13);
        String[] formats = {"512+8", "4096+8", "4096+16", "4096+64", "4096+16/crc32c", "4096+64/crc32c"};
        for (String fspec : formats) {
            String fs = fspec.split("/")[0];
            int[] dm = BlockFormat.parseSizes(fs);
            GuardType guard = fspec.contains("/") ? GuardType.parse(fspec.split("/")[1]) : BlockFormat.defaultGuard(dm[1]);
            for (PiLocation loc : PiLocation.values()) {
                for (boolean direct : new boolean[] {false, true}) {
                    BlockFormat f = BlockFormat.of(dm[0], dm[1], guard, PiType.TYPE_1, loc);
                    int nblocks = 1 + r.nextInt(150);
                    int bs = f.dataSize() + f.metadataSize();
                    byte[] raw = new byte[nblocks * bs];
                    r.nextBytes(raw);
                    ByteBuffer b = direct ? ByteBuffer.allocateDirect(raw.length) : ByteBuffer.allocate(raw.length);
                    b.put(raw).clear();
                    PiContext ctx = PiContext.builder(f).initialRefTag(r.nextInt(1 << 20)).appTag(0x1234).build();
                    ScatterList sl = ScatterList.of(b);
                    Pi.generate(ctx, sl, nblocks);
                    assertEquals(null, Pi.verify(ctx, sl, nblocks), fs + " " + loc + " direct=" + direct);
                    byte[] out = new byte[raw.length];
                    b.get(0, out);
                    int tupleOff = f.tupleOffsetInMetadata();
                    int guarded = f.dataSize() + f.guardedMetadataPrefix();
                    for (int i = 0; i < nblocks; i++) {
                        long want = ReferenceGuards.guard(f.guard(), 0, out, i * bs, guarded);
                        long got = Tuples.guard(f.guard(), ByteBuffer.wrap(out), i * bs + f.dataSize() + tupleOff);
                        assertEquals(want, got, fs + " " + loc + " block " + i);
                    }
                    // flip one data bit: verify names that block
                    int victim = r.nextInt(nblocks);
                    b.put(victim * bs + 5, (byte) (b.get(victim * bs + 5) ^ 0x10));
                    PiError e = Pi.verify(ctx, sl, nblocks);
                    assertNotNull(e, fs + " " + loc);
                    assertEquals(PiErrorKind.GUARD, e.kind());
                    assertEquals(victim, e.blockIndex());
                }
            }
        }
    }
}
