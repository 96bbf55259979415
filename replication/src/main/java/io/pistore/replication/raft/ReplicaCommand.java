package io.pistore.replication.raft;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * One operation on a replicated volume as it travels through the Raft log (writes, write-zeroes,
 * deallocate, flush, repair) or as a read query. The data and metadata (the PI) ride in the log
 * entry itself, after a fixed header:
 * {@code op(1) flags(1) lba(8) blocks(4) dataBytes(4) metadataBytes(4) [fenceKey(8) fenceEpoch(8) [seq(8)] [view(8)]]
 * data metadata}, big-endian; flags: 1 FUA, 2 the fence follows ({@link io.pistore.spi.WriteFence}: writes,
 * write-zeroes and deallocations a host sent), 4 the write's sequence number follows the fence, 8 the
 * version of the shared state the write was checked against follows ({@link io.pistore.spi.WriteFence#view},
 * after the sequence number where there is one); peers of a build without flag 4 or 8 fail such an entry.
 * A decoded command's data and metadata are views of the entry's bytes ({@link ProtoBytes}), never
 * written through.
 */
public final class ReplicaCommand {
    /** What a command does; the byte is its code in the log, so codes are never reused. */
    public enum Op {
        WRITE(1), WRITE_ZEROES(2), DEALLOCATE(3),
        /** Each replica flushes its volume. Sent by older builds only: a write is durable once committed. */
        FLUSH(4),
        /** Replace the blocks on every replica whose copy fails its PI check; a passing copy is left alone. */
        REPAIR(5),
        /**
         * Several commands in one log entry, applied in order, each with its own outcome: the header's
         * {@code blocks} is their count, its data their encodings, each after its length ({@code int}).
         */
        BATCH(6),
        /**
         * Grow every replica to {@code lba} blocks (a larger count; never shrinks): ordered with the
         * writes, so a write to a new block follows it on every replica. Peers of a build without it
         * fail the entry.
         */
        RESIZE(7),
        /**
         * Sets the volume's shared state ({@link io.pistore.spi.SharedVolumeState}) if its version is
         * still {@code lba}: the data is {@code nonce(8) value}, the nonce telling a second copy of the
         * same change from another's ({@link ReplicaSharedState}); an expected version of -1 with no
         * value sets nothing and answers the version at its place in the log (a barrier for a port that
         * catches up, {@link #sharedStateCheck}). Peers of a build without it fail the entry.
         */
        SHARED_STATE(8),
        /**
         * COMPARE AND WRITE, ordered with every other write: the data is the blocks to compare, then
         * the blocks to write (twice {@code blocks} of data), the metadata the written blocks'. Each
         * replica compares its stored blocks as it applies the entry and writes only when all are
         * equal ({@link ApplyOutcome#miscompare} otherwise). Metadata of {@code 2 * blocks + 1}
         * entries compares the stored metadata too: the written blocks', then one entry per block to
         * compare, then a mask of the bits compared (iSCSI's PI fields); peers of a build without
         * that fail such an entry, as peers without the op fail any.
         */
        COMPARE_AND_WRITE(9),
        /** A query, never in the log. */
        READ(16),
        /** A query for the volume's format and size. */
        INFO(17),
        /** A query for the address each peer name first had in the group ({@link PeerAddressMemory}). */
        PEERS(18);

        final byte code;

        Op(int code) {
            this.code = (byte) code;
        }

        static Op of(byte code) {
            for (Op o : values()) {
                if (o.code == code) {
                    return o;
                }
            }
            throw new IllegalArgumentException("unknown replica command code " + code);
        }
    }

    /** What a refused shrink says: a volume only grows. */
    public static final String SHRINKS = "would drop data and is not supported";

    /** The one-line refusal of shrinking {@code volume} from {@code blocks} to {@code to} blocks. */
    public static String shrinking(String volume, long blocks, long to) {
        return "volume " + volume + " has " + blocks + " blocks; shrinking to " + to + " " + SHRINKS;
    }

    static final int HEADER_BYTES = 22;
    private static final int FLAG_FUA = 1;
    private static final int FLAG_FENCE = 2;
    private static final int FENCE_BYTES = 16;
    private static final int FLAG_SEQ = 4;
    private static final int SEQ_BYTES = 8;
    private static final int FLAG_VIEW = 8;
    private static final int VIEW_BYTES = 8;

    final Op op;
    final boolean fua;
    public final long lba;
    final int blocks;
    /** Data and metadata, or null for commands that carry none. */
    final ByteBuffer data;
    final ByteBuffer metadata;
    /** The host stream and connection that sent it (key 0: none). */
    final long fenceKey;
    final long fenceEpoch;
    /** The write's number in its host stream, the same in each copy the host sent (0: none). */
    final long fenceSeq;
    /** The version of the volume's shared state the write was checked against (0: none). */
    final long fenceView;

    private ReplicaCommand(Op op, boolean fua, long lba, int blocks, ByteBuffer data, ByteBuffer metadata, long fenceKey,
                           long fenceEpoch, long fenceSeq, long fenceView) {
        this.fenceView = fenceView;
        this.fenceKey = fenceKey;
        this.fenceEpoch = fenceEpoch;
        this.fenceSeq = fenceSeq;
        this.op = op;
        this.fua = fua;
        this.lba = lba;
        this.blocks = blocks;
        this.data = data;
        this.metadata = metadata;
    }

    /** A write or repair: copies {@code data} and {@code metadata} (may be null) into one message. */
    public static Message carrying(Op op, long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) {
        return carrying(op, lba, blocks, data, metadata, fua, null);
    }

    /** A write or repair sent with {@code fence} (null: none). */
    public static Message carrying(Op op, long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua,
                                   io.pistore.spi.WriteFence fence) {
        int dl = (int) data.length();
        int ml = metadata == null ? 0 : (int) metadata.length();
        int at = HEADER_BYTES + fenceBytes(fence);
        byte[] a = new byte[at + dl + ml];
        header(ByteBuffer.wrap(a), op, lba, blocks, fua, dl, ml, fence);
        data.read(0, a, at, dl);
        if (ml > 0) {
            metadata.read(0, a, at + dl, ml);
        }
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(a));
    }

    private static void header(ByteBuffer b, Op op, long lba, int blocks, boolean fua, int dl, int ml,
                               io.pistore.spi.WriteFence fence) {
        boolean seq = fence != null && fence.seq() != 0;
        boolean view = fence != null && fence.view() != 0;
        b.put(op.code).put((byte) ((fua ? FLAG_FUA : 0) | (fence != null ? FLAG_FENCE : 0) | (seq ? FLAG_SEQ : 0)
                | (view ? FLAG_VIEW : 0))).putLong(lba).putInt(blocks).putInt(dl).putInt(ml);
        if (fence != null) {
            b.putLong(fence.key()).putLong(fence.epoch());
        }
        if (seq) {
            b.putLong(fence.seq());
        }
        if (view) {
            b.putLong(fence.view());
        }
    }

    /** Header bytes of {@code fence} (null: none). */
    private static int fenceBytes(io.pistore.spi.WriteFence fence) {
        return fence == null ? 0 : FENCE_BYTES + (fence.seq() != 0 ? SEQ_BYTES : 0) + (fence.view() != 0 ? VIEW_BYTES : 0);
    }

    /**
     * A change of the volume's shared state to {@code value} if its version is still {@code expected};
     * {@code nonce} is the same in every copy of this change and differs between changes.
     */
    public static Message sharedState(long expected, long nonce, byte[] value) {
        if (expected < 0 || value.length > io.pistore.spi.SharedVolumeState.MAX_BYTES) {
            throw new IllegalArgumentException("a shared state of " + value.length + " bytes (at most "
                    + io.pistore.spi.SharedVolumeState.MAX_BYTES + ") expected at version " + expected);
        }
        byte[] a = new byte[HEADER_BYTES + 8 + value.length];
        ByteBuffer b = ByteBuffer.wrap(a);
        header(b, Op.SHARED_STATE, expected, 0, false, 8 + value.length, 0, null);
        b.putLong(nonce).put(value);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(a));
    }

    /** A shared-state command that changes nothing and answers the version where it stands in the log. */
    public static Message sharedStateCheck() {
        byte[] a = new byte[HEADER_BYTES + 8];
        header(ByteBuffer.wrap(a), Op.SHARED_STATE, -1, 0, false, 8, 0, null);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(a));
    }

    /** A command without data: write-zeroes, deallocate, flush, read. */
    public static Message plain(Op op, long lba, int blocks, boolean fua) {
        return plain(op, lba, blocks, fua, null);
    }

    /** A write-zeroes or deallocation sent with {@code fence} (null: none). */
    public static Message plain(Op op, long lba, int blocks, boolean fua, io.pistore.spi.WriteFence fence) {
        byte[] a = new byte[HEADER_BYTES + fenceBytes(fence)];
        header(ByteBuffer.wrap(a), op, lba, blocks, fua, 0, 0, fence);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(a));
    }

    /**
     * One log entry carrying {@code commands} (each an encoded command, none a batch), applied in
     * order. The commands' bytes are not copied: the entry is a rope of the header, the lengths and them.
     */
    public static Message batch(java.util.List<ByteString> commands) {
        long payload = 0;
        for (ByteString c : commands) {
            payload += 4 + c.size();
        }
        byte[] h = new byte[HEADER_BYTES];
        ByteBuffer.wrap(h).put(Op.BATCH.code).put((byte) 0).putLong(0).putInt(commands.size()).putInt((int) payload).putInt(0);
        ByteString out = UnsafeByteOperations.unsafeWrap(h);
        for (ByteString c : commands) {
            out = out.concat(UnsafeByteOperations.unsafeWrap(ByteBuffer.allocate(4).putInt(c.size()).array())).concat(c);
        }
        return Message.valueOf(out);
    }

    static boolean isBatch(ByteString bytes) {
        return !bytes.isEmpty() && bytes.byteAt(0) == Op.BATCH.code;
    }

    /** The commands of a log entry: those of a batch, in order, or the one it is. */
    public static java.util.List<ReplicaCommand> decodeAll(ByteString bytes) {
        if (!isBatch(bytes)) {
            return java.util.List.of(decode(bytes));
        }
        // The header alone: the leader's batch is a rope of its commands, which a view of the whole
        // would copy.
        ReplicaCommand b = decode(bytes.substring(0, Math.min(HEADER_BYTES, bytes.size())), bytes.size() - HEADER_BYTES);
        java.util.List<ReplicaCommand> out = new java.util.ArrayList<>(b.blocks);
        ByteString payload = bytes.substring(HEADER_BYTES);
        int off = 0;
        for (int i = 0; i < b.blocks; i++) {
            if (payload.size() - off < 4) {
                throw new IllegalArgumentException("batch of " + b.blocks + " commands ends after " + i);
            }
            int len = (payload.byteAt(off) & 0xFF) << 24 | (payload.byteAt(off + 1) & 0xFF) << 16
                    | (payload.byteAt(off + 2) & 0xFF) << 8 | (payload.byteAt(off + 3) & 0xFF);
            off += 4;
            if (len < 0 || len > payload.size() - off) {
                throw new IllegalArgumentException("batch command " + i + " says " + len + " bytes, " + (payload.size() - off)
                        + " left");
            }
            ReplicaCommand c = decode(payload.substring(off, off + len));
            if (c.op == Op.BATCH) {
                throw new IllegalArgumentException("batch inside a batch");
            }
            out.add(c);
            off += len;
        }
        if (off != payload.size()) {
            throw new IllegalArgumentException("batch of " + b.blocks + " commands carries " + (payload.size() - off)
                    + " bytes more");
        }
        return out;
    }

    static ReplicaCommand decode(ByteString bytes) {
        return decode(bytes, -1);
    }

    /**
     * {@code carried}: the bytes after the header when {@code bytes} is the header alone (a batch's),
     * else -1 (they follow the header in {@code bytes}).
     */
    private static ReplicaCommand decode(ByteString bytes, long carried) {
        ByteBuffer b = ProtoBytes.view(bytes);
        if (b.remaining() < HEADER_BYTES) {
            throw new IllegalArgumentException("replica command of " + b.remaining() + " bytes, shorter than its header");
        }
        Op op = Op.of(b.get());
        int flags = b.get();
        boolean fua = (flags & FLAG_FUA) != 0;
        long lba = b.getLong();
        int blocks = b.getInt();
        int dl = b.getInt();
        int ml = b.getInt();
        long key = 0;
        long epoch = 0;
        long seq = 0;
        long view = 0;
        if ((flags & FLAG_FENCE) != 0) {
            if (carried >= 0 || b.remaining() < FENCE_BYTES) {
                throw new IllegalArgumentException("replica command says it carries a fence, but its header ends first");
            }
            key = b.getLong();
            epoch = b.getLong();
            if (key == 0 || epoch < 1) {
                throw new IllegalArgumentException("replica command carries fence " + key + "/" + epoch);
            }
        }
        if ((flags & FLAG_SEQ) != 0) {
            if ((flags & FLAG_FENCE) == 0 || b.remaining() < SEQ_BYTES) {
                throw new IllegalArgumentException("replica command says it carries a sequence number, but "
                        + ((flags & FLAG_FENCE) == 0 ? "no fence" : "its header ends first"));
            }
            seq = b.getLong();
            if (seq < 1) {
                throw new IllegalArgumentException("replica command carries sequence number " + seq);
            }
        }
        if ((flags & FLAG_VIEW) != 0) {
            if ((flags & FLAG_FENCE) == 0 || b.remaining() < VIEW_BYTES) {
                throw new IllegalArgumentException("replica command says it carries a shared-state view, but "
                        + ((flags & FLAG_FENCE) == 0 ? "no fence" : "its header ends first"));
            }
            view = b.getLong();
            if (view < 1) {
                throw new IllegalArgumentException("replica command carries shared-state view " + view);
            }
        }
        long after = carried < 0 ? b.remaining() : carried;
        if (dl < 0 || ml < 0 || after != (long) dl + ml) {
            throw new IllegalArgumentException("replica command says " + dl + "+" + ml + " bytes of data and metadata, carries "
                    + after);
        }
        if (carried >= 0) {
            return new ReplicaCommand(op, fua, lba, blocks, null, null, key, epoch, seq, view);
        }
        ByteBuffer data = null;
        ByteBuffer meta = null;
        if (dl > 0) {
            data = b.slice().limit(dl);
            b.position(b.position() + dl);
        }
        if (ml > 0) {
            meta = b.slice().limit(ml);
        }
        return new ReplicaCommand(op, fua, lba, blocks, data, meta, key, epoch, seq, view);
    }

    ScatterList dataList() {
        return data == null ? null : ScatterList.of(data.duplicate());
    }

    ScatterList metadataList() {
        return metadata == null ? null : ScatterList.of(metadata.duplicate());
    }

    @Override
    public String toString() {
        if (op == Op.SHARED_STATE) {
            return op + " expected=" + lba + " bytes=" + (data == null ? 0 : Math.max(0, data.remaining() - 8));
        }
        return op + " lba=" + lba + " blocks=" + blocks + (fua ? " fua" : "")
                + (fenceKey != 0 ? " fence " + Long.toHexString(fenceKey) + "/" + fenceEpoch : "")
                + (fenceSeq != 0 ? " #" + fenceSeq : "") + (fenceView != 0 ? " view " + fenceView : "");
    }
}
