package io.pistore.transport.rdma.internal;

import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Command and response capsules (256 bytes each, big-endian), in the spirit of NVMe-oF's: the
 * command carries one keyed data descriptor (address, length, key) the target reaches with RDMA
 * READ or WRITE.
 *
 * <pre>
 * command  0 op u8 | 1 flags u8 | 2 cid u16 | 4 checks u8 | 5 rsvd | 6 app u16 | 8 appMask u16 | 10 nameLen u16
 *         12 blocks u32 | 16 lba u64 | 24 ref u64 | 32 addr u64 | 40 length u32 | 44 key u32 | 48 metaOffset u32
 *         52 fence epoch u32 | 56 fence key u64 (0: none; writes, zero writes, deallocations)
 *         64 write seq u64 (the write's number in its host stream, 0: none) | 72.. volume name (UTF-8, at most 184 bytes)
 * response 0 cid u16 | 2 status u8 | 3 piKind u8 (0 none, 1 guard, 2 app, 3 ref) | 4 msgLen u16 | 6 rsvd
 *          8 blockIndex u64 | 16 expected u64 | 24 actual u64 | 32 payloadLen u32 | 64.. message (UTF-8, 192)
 * </pre>
 */
public final class Capsule {
    public static final int SIZE = 256;
    public static final int MAX_NAME = 184;
    /** Where a command's volume name starts (a response's message starts at 64). */
    private static final int O_NAME = 72;
    public static final int MAGIC = 0x50495354; // "PIST"

    public static final int OP_READ = 1;
    public static final int OP_WRITE = 2;
    public static final int OP_FLUSH = 3;
    public static final int OP_WRITE_ZEROES = 4;
    public static final int OP_DEALLOCATE = 5;
    public static final int OP_DISCOVER = 9;
    /**
     * The peer's path states, held until its change counter differs from {@code lba} (the one the
     * host knows) or {@code blocks} milliseconds pass; written like DISCOVER's list into the buffer
     * the command names (docs/RDMA.md#path-states).
     */
    public static final int OP_PATH_STATES = 10;
    /** The longest a target holds a PATH_STATES query. */
    public static final int MAX_PATH_WAIT_MS = 60_000;

    public static final int F_FUA = 1;
    public static final int F_PRACT = 2;
    /** Data moves through integrity MRs: the wire carries data interleaved with 8-byte T10-DIF tuples. */
    public static final int F_OFFLOAD = 4;
    /** Software path: the buffer holds the metadata at {@code metaOffset}. */
    public static final int F_META = 8;
    /**
     * A READ of the blocks' stored metadata alone (block status), into the buffer the command names
     * (software path, {@code length} = blocks × metadata size): no data read, nothing checked.
     */
    public static final int F_METADATA_ONLY = 16;

    private Capsule() {
    }

    public static int opCode(Operation op) {
        switch (op) {
            case READ: return OP_READ;
            case WRITE: return OP_WRITE;
            case FLUSH: return OP_FLUSH;
            case WRITE_ZEROES: return OP_WRITE_ZEROES;
            default: return OP_DEALLOCATE;
        }
    }

    /** A decoded command (mutable, one per command slot). */
    public static final class Command {
        public int op;
        public int flags;
        public int cid;
        public int checks;
        public int appTag;
        public int appMask;
        public long blocks;
        public long lba;
        public long refTag;
        public long addr;
        public long length;
        public int key;
        public long metaOffset;
        /** The host connection's {@link io.pistore.spi.WriteFence} as carried (key 0: none). */
        public long fenceKey;
        public long fenceEpoch;
        /** The write's number in its host stream ({@link io.pistore.spi.WriteFence#seq}; 0: none). */
        public long fenceSeq;
        public String volume;

        public boolean has(int f) {
            return (flags & f) != 0;
        }

        public Protection protection() {
            return new Protection(has(F_PRACT), CheckFlags.fromBits(checks), refTag, appTag, appMask);
        }

        public Command decode(ByteBuffer b, int at) {
            op = b.get(at) & 0xFF;
            flags = b.get(at + 1) & 0xFF;
            cid = b.getShort(at + 2) & 0xFFFF;
            checks = b.get(at + 4) & 7;
            appTag = b.getShort(at + 6) & 0xFFFF;
            appMask = b.getShort(at + 8) & 0xFFFF;
            int nameLen = Math.min(MAX_NAME, b.getShort(at + 10) & 0xFFFF);
            blocks = b.getInt(at + 12) & 0xFFFFFFFFL;
            lba = b.getLong(at + 16);
            refTag = b.getLong(at + 24);
            addr = b.getLong(at + 32);
            length = b.getInt(at + 40) & 0xFFFFFFFFL;
            key = b.getInt(at + 44);
            metaOffset = b.getInt(at + 48) & 0xFFFFFFFFL;
            fenceEpoch = b.getInt(at + 52) & 0xFFFFFFFFL;
            fenceKey = b.getLong(at + 56);
            fenceSeq = b.getLong(at + 64);
            byte[] n = new byte[nameLen];
            b.get(at + O_NAME, n);
            volume = new String(n, StandardCharsets.UTF_8);
            return this;
        }
    }

    /** Encodes a command; returns its length. */
    public static int encode(ByteBuffer b, int at, int op, int flags, int cid, Protection p, long blocks, long lba,
                             long addr, long length, int key, long metaOffset, byte[] name) {
        b.put(at, (byte) op);
        b.put(at + 1, (byte) flags);
        b.putShort(at + 2, (short) cid);
        b.put(at + 4, (byte) p.checks().bits());
        b.put(at + 5, (byte) 0);
        b.putShort(at + 6, (short) p.appTag());
        b.putShort(at + 8, (short) p.appMask());
        int n = Math.min(MAX_NAME, name.length);
        b.putShort(at + 10, (short) n);
        b.putInt(at + 12, (int) blocks);
        b.putLong(at + 16, lba);
        b.putLong(at + 24, p.initialRefTag());
        b.putLong(at + 32, addr);
        b.putInt(at + 40, (int) length);
        b.putInt(at + 44, key);
        b.putInt(at + 48, (int) metaOffset);
        b.putInt(at + 52, 0);
        b.putLong(at + 56, 0);
        b.putLong(at + 64, 0);
        b.put(at + O_NAME, name, 0, n);
        return O_NAME + n;
    }

    /** Puts {@code f} into the command encoded at {@code at}: for writes, zero writes and deallocations (null: none). */
    public static void putFence(ByteBuffer b, int at, io.pistore.spi.WriteFence f) {
        putFence(b, at, f, 0);
    }

    /** As {@link #putFence(ByteBuffer, int, io.pistore.spi.WriteFence)}, with the write's number {@code seq} (0: none). */
    public static void putFence(ByteBuffer b, int at, io.pistore.spi.WriteFence f, long seq) {
        int op = b.get(at) & 0xFF;
        if (f == null || op == OP_READ || op == OP_FLUSH || op > OP_DEALLOCATE) {
            return;
        }
        b.putInt(at + 52, (int) f.epoch());
        b.putLong(at + 56, f.key());
        b.putLong(at + 64, seq);
    }

    /** Encodes a response; returns its length. */
    public static int encodeResponse(ByteBuffer b, int at, int cid, Completion c, int payloadLen) {
        b.putShort(at, (short) cid);
        b.put(at + 2, (byte) c.status().ordinal());
        PiError e = c.piError();
        b.put(at + 3, (byte) (e == null ? 0 : e.kind() == PiErrorKind.GUARD ? 1 : e.kind() == PiErrorKind.APP_TAG ? 2 : 3));
        b.putLong(at + 8, e == null ? 0 : e.blockIndex());
        b.putLong(at + 16, e == null ? 0 : e.expected());
        b.putLong(at + 24, e == null ? 0 : e.actual());
        b.putInt(at + 32, payloadLen);
        byte[] msg = c.message() == null || e != null ? new byte[0] : c.message().getBytes(StandardCharsets.UTF_8);
        int n = Math.min(192, msg.length);
        b.putShort(at + 4, (short) n);
        b.put(at + 64, msg, 0, n);
        return 64 + n;
    }

    public static int responseCid(ByteBuffer b, int at) {
        return b.getShort(at) & 0xFFFF;
    }

    public static int responsePayload(ByteBuffer b, int at) {
        return b.getInt(at + 32);
    }

    /** Decodes a response of a request at {@code lba}. */
    public static Completion decodeResponse(ByteBuffer b, int at, long lba) {
        Status[] all = Status.values();
        int s = b.get(at + 2) & 0xFF;
        Status st = s < all.length ? all[s] : Status.INTERNAL_ERROR;
        if (st == Status.SUCCESS) {
            return Completion.success();
        }
        int kind = b.get(at + 3) & 0xFF;
        if (st.isPiError() && kind != 0) {
            // The status names the kind (Status.of); the kind byte only says that the detail is present.
            return Completion.piError(lba, new PiError(st.piErrorKind(), b.getLong(at + 8), b.getLong(at + 16), b.getLong(at + 24)));
        }
        int n = b.getShort(at + 4) & 0xFFFF;
        byte[] m = new byte[n];
        b.get(at + 64, m);
        if (st.isPiError()) {
            st = Status.INTERNAL_ERROR;
        }
        return Completion.failure(st, new String(m, StandardCharsets.UTF_8));
    }
}
