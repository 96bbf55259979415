package io.pistore.engine.volume.file;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Writes journal records to a {@link FileVolume}'s home files ({@code NAME.data}, {@code NAME.meta})
 * and forces them: a checkpoint's or recovery's records in LBA order, each block's newest version
 * once, or a write-through writer's own record. Invariant: it is only handed records already
 * durable in the journal (forced, or on storage in memory), so a crash at any point between its
 * writes is repaired by replaying them; it never moves the journal's head.
 */
final class HomeWriter {
    private static final int ZERO_CHUNK = 1 << 20;

    private final BlockFormat format;
    private final long blockCount;
    private final Journal journal;
    /** Where a block's newest version is while only in the journal: a batch skips blocks rewritten later. */
    private final JournalIndex index;
    private final byte[] unwrittenMeta;
    /** The home files as checkpoints and recovery write them ({@code homeMeta} null without metadata). */
    private final HomeFile homeData;
    private final HomeFile homeMeta;

    /**
     * Writes home for a volume of {@code blockCount} blocks, its data mapped in pieces of about
     * {@code mapSegment} bytes and its metadata in pieces of {@code metaSegment} bytes.
     */
    HomeWriter(String name, BlockFormat format, long blockCount, StorageFile data, StorageFile meta, Journal journal,
               JournalIndex index, long mapSegment, long metaSegment, MetadataCoding coding) {
        this.format = format;
        this.blockCount = blockCount;
        this.journal = journal;
        this.index = index;
        this.unwrittenMeta = UnwrittenBlock.metadata(format);
        int ds = format.dataSize();
        this.homeData = new HomeFile(data, name + ".data", blockCount * ds, Math.max(1, mapSegment / ds) * ds, null);
        this.homeMeta = meta == null ? null
                : new HomeFile(meta, name + ".meta", blockCount * format.metadataSize(), metaSegment, coding);
    }

    /**
     * Write-through: writes the blocks of record {@code a}, just appended and already as durable as
     * it gets, home from the journal's mapping where it has one, else from the request's buffers.
     */
    void writeRecord(byte type, Journal.Appended a, long lba, int blocks, ScatterList dataIn, ScatterList metaIn)
            throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        if (type == Journal.ZEROES) {
            writeZeroData(homeData::writePositional, lba, blocks);
            if (homeMeta != null) {
                fillUnwritten(homeMeta::writeShared, format, unwrittenMeta, lba, blocks);
            }
            return;
        }
        int dlen = blocks * ds;
        int mlen = blocks * ms;
        ByteBuffer p = journal.payloadView(a, dlen + mlen);
        if (p != null) {
            homeData.writeShared(p.duplicate().limit(dlen), lba * ds);
            if (homeMeta != null) {
                homeMeta.writeShared(p.duplicate().limit(dlen + mlen).position(dlen), lba * ms);
            }
        } else {
            writeFrom(homeData, dataIn, dlen, lba * ds);
            if (homeMeta != null) {
                writeFrom(homeMeta, metaIn, mlen, lba * ms);
            }
        }
    }

    /** Where {@link #fillUnwritten} writes: a storage file, or a home file at a checkpoint. */
    interface Writes {
        void write(ByteBuffer src, long pos) throws IOException;
    }

    static void fillUnwritten(Writes m, BlockFormat format, byte[] unwritten, long lba, long blocks)
            throws IOException {
        int ms = format.metadataSize();
        int perChunk = Math.max(1, ZERO_CHUNK / ms);
        byte[] pattern = new byte[(int) Math.min(blocks, perChunk) * ms];
        for (int i = 0; i < pattern.length / ms; i++) {
            System.arraycopy(unwritten, 0, pattern, i * ms, ms);
        }
        long done = 0;
        while (done < blocks) {
            int n = (int) Math.min(blocks - done, pattern.length / ms);
            m.write(ByteBuffer.wrap(pattern, 0, n * ms), (lba + done) * ms);
            done += n;
        }
    }

    /** Writes {@code len} bytes of {@code src} at {@code pos} through this thread's direct scratch buffer. */
    private static void writeFrom(HomeFile home, ScatterList src, int len, long pos) throws IOException {
        int done = 0;
        while (done < len) {
            int n = Math.min(len - done, ZERO_CHUNK);
            ByteBuffer b = VolumeReader.scratch(n);
            src.read(done, b, 0, n);
            home.writeShared(b.limit(n).position(0), pos + done);
            done += n;
        }
    }

    /** Forces what checkpoints or recovery wrote to the home files. */
    void sync() throws IOException {
        homeData.sync();
        if (homeMeta != null) {
            homeMeta.sync();
        }
    }

    /**
     * Applies the records from {@code from}'s head up to {@code lastSeq} to the home files
     * ({@code verify}: checking their payload CRCs, as recovery must) and returns how many: each
     * block's newest version among them, in LBA order ({@link HomeBatch}). A block is skipped when
     * a later record rewrites it that is durable (sequence number up to {@code durable}; -1 in
     * recovery, which applies every block): recovery would replay that one too. The home files are
     * forced every {@code syncEvery} bytes written home (asked after each write: {@link FileVolume#homeSyncEvery}
     * or unbounded); the caller forces them once more at the end.
     */
    long applyInLbaOrder(Journal.Header from, long lastSeq, boolean verify, long durable,
                                 java.util.function.LongSupplier syncEvery) throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        ByteBuffer[] buffer = new ByteBuffer[1];
        long oneRead = readBufferSize();
        HomeBatch batch = new HomeBatch(blockCount, ds, ms, new HomeBatch.Sink() {
            /** Bytes written home since the home files were last forced. */
            private long unforced;

            @Override
            public void write(long lba, int blocks, long dataPos, long metaPos) throws IOException {
                int dataLen = blocks * ds;
                long span = metaPos + (long) blocks * ms - dataPos;
                if (homeMeta != null && metaPos >= dataPos + dataLen && span <= oneRead) {
                    // the run's data and metadata with one journal read (what lies between is skipped)
                    ByteBuffer both = journalBytes(dataPos, (int) span, buffer);
                    homeData.write(both.duplicate().limit(dataLen), lba * ds);
                    homeMeta.write(both.duplicate().position((int) (metaPos - dataPos)), lba * ms);
                } else {
                    homeData.write(journalBytes(dataPos, dataLen, buffer), lba * ds);
                    if (homeMeta != null) {
                        homeMeta.write(journalBytes(metaPos, blocks * ms, buffer), lba * ms);
                    }
                }
                written(blocks);
            }

            @Override
            public void zero(long lba, int blocks) throws IOException {
                writeZeroData(homeData::write, lba, blocks);
                if (homeMeta != null) {
                    fillUnwritten(homeMeta::write, format, unwrittenMeta, lba, blocks);
                }
                written(blocks);
            }

            /**
             * Forces the home files once {@code syncEvery} bytes went home since the last time:
             * only blocks of durable records were written, and the head does not move until the
             * caller forces the rest, so this changes nothing a crash can leave behind.
             */
            private void written(int blocks) throws IOException {
                unforced += (long) blocks * (ds + ms);
                if (unforced >= syncEvery.getAsLong()) {
                    sync();
                    unforced = 0;
                }
            }
        });
        long n = journal.scan(from, blockCount, lastSeq, verify, (seq, type, lba, blocks, pos) -> {
            long dataAt = pos + Journal.RECORD_HEADER;
            long metaAt = dataAt + (long) blocks * ds;
            for (int i = 0; i < blocks; i++) {
                if (isRewrittenLater(lba + i, seq, durable)) {
                    continue;
                }
                if (type == Journal.WRITE) {
                    batch.add(lba + i, dataAt + (long) i * ds, metaAt + (long) i * ms);
                } else {
                    batch.add(lba + i, -1, -1);
                }
            }
        });
        batch.writeOut();
        return n;
    }

    /** {@code len} bytes of the journal at {@code pos}: a view of its mapping, or read into {@code buffer[0]}. */
    private ByteBuffer journalBytes(long pos, int len, ByteBuffer[] buffer) throws IOException {
        ByteBuffer v = journal.view(pos, len);
        if (v != null) {
            return v;
        }
        if (buffer[0] == null || buffer[0].capacity() < len) {
            // Direct, so a positional write from it copies nothing more.
            buffer[0] = ByteBuffer.allocateDirect(Math.max(len, readBufferSize()));
        }
        ByteBuffer b = buffer[0].clear().limit(len);
        journal.read(b, pos);
        return b.flip();
    }

    /** The size of the buffer runs are read into from an unmapped journal: a whole run of 8-byte tuples fits. */
    private int readBufferSize() {
        return HomeBatch.MOST_PER_WRITE * (format.dataSize() + 8);
    }

    private boolean isRewrittenLater(long lba, long seq, long durable) {
        long newest = index.seqOf(lba); // ABSENT is below every sequence number
        return newest > seq && newest <= durable;
    }

    private void writeZeroData(Writes home, long lba, long blocks) throws IOException {
        long pos = lba * format.dataSize();
        long len = blocks * format.dataSize();
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(len, ZERO_CHUNK));
        while (len > 0) {
            zeros.clear().limit((int) Math.min(len, zeros.capacity()));
            int n = zeros.remaining();
            home.write(zeros, pos);
            pos += n;
            len -= n;
        }
    }
}
