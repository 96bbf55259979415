package io.pistore.engine.scrub;

import io.pistore.integrity.UnwrittenBlock;
import io.pistore.engine.volume.Volume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Reads every block of a volume and checks its stored PI, without repairing anything. What can be
 * checked without the writer's request: the guard always; the reference tag for Type 1, where NVMe
 * ties it to the LBA; not the application tag, which belongs to the writer. Unwritten blocks carry
 * an escape tuple; they are counted apart, and their data must be the zeros that tuple's guard
 * covers (else the block is reported: data written without its metadata).
 */
public final class Scrubber {
    private static final int CHUNK_BYTES = 1 << 20;

    /** What a scrub found. */
    public static final class Report {
        public long blocks;
        public long badBlocks;
        public long unwrittenBlocks;

        public boolean clean() {
            return badBlocks == 0;
        }
    }

    private Scrubber() {
    }

    /** The checks a scrub can make on a format. */
    public static CheckFlags checks(BlockFormat f) {
        return f.type() == PiType.TYPE_1 ? CheckFlags.of(true, false, true) : CheckFlags.GUARD;
    }

    /**
     * Scrubs {@code v} as {@code pistore scrub} does, offline or through the server that serves it:
     * to {@code out} one line per bad block (at most {@code maxLines}, all counted) and the summary.
     */
    public static Report scrub(Volume v, PrintWriter out, long maxLines, LongConsumer progress) throws IOException {
        BadBlockReport report = new BadBlockReport(out, maxLines, v.format(), checks(v.format()));
        Report r = scrub(v, e -> report.add(0, List.of(e)), progress);
        out.println(report.summary(r.blocks) + ", " + r.unwrittenBlocks + " unwritten");
        return r;
    }

    /**
     * Scrubs {@code v}; each bad block goes to {@code bad} with its absolute LBA as the block index,
     * and {@code progress} hears the number of blocks done after each chunk.
     */
    public static Report scrub(Volume v, Consumer<PiError> bad, LongConsumer progress) throws IOException {
        BlockFormat f = v.format();
        Report r = new Report();
        if (!f.hasPi()) {
            r.blocks = v.blockCount();
            progress.accept(r.blocks);
            return r;
        }
        int per = Math.max(1, CHUNK_BYTES / f.dataSize());
        ByteBuffer data = ByteBuffer.allocateDirect(per * f.dataSize());
        byte[] meta = new byte[per * f.metadataSize()];
        CheckFlags checks = checks(f);
        for (long lba = 0; lba < v.blockCount(); lba += per) {
            int n = (int) Math.min(per, v.blockCount() - lba);
            data.clear().limit(n * f.dataSize());
            ScatterList dl = ScatterList.of(data);
            ScatterList ml = ScatterList.of(ByteBuffer.wrap(meta, 0, n * f.metadataSize()));
            v.read(lba, n, dl, ml);
            PiContext ctx = PiContext.builder(f).checks(checks).initialRefTag(f.refTagOf(lba)).build();
            for (PiError e : Pi.verifyAll(ctx, dl, ml, n, n)) {
                r.badBlocks++;
                bad.accept(e.offsetBy(lba));
            }
            long base = lba;
            r.unwrittenBlocks += UnwrittenBlock.checkData(f, dl, ml, n, e -> {
                r.badBlocks++;
                bad.accept(e.offsetBy(base));
            });
            r.blocks += n;
            progress.accept(r.blocks);
        }
        return r;
    }
}
