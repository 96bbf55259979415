package io.pistore.transport.tcp.internal;

import io.pistore.integrity.CheckFlags;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;

/**
 * Constants of the pistore TCP framing, version 1 (docs/PROTOCOL-TCP.md is the specification; keep
 * the two in step). All integers are big-endian.
 *
 * <pre>
 * common prefix (16 bytes)
 *   0  u32 magic 0x50495443 "PITC"     4  u8 version (1)    5  u8 opcode    6  u16 flags
 *   8  u32 command id                  12 u32 payload length (bytes, without digests)
 * request (READ, WRITE, FLUSH, WRITE_ZEROES, DEALLOCATE)
 *   16 u32 volume id   20 u32 block count   24 u64 lba   32 u64 initial ref tag
 *   40 u16 app tag     42 u16 app mask      44 u32 fence epoch   48 u64 fence key (0: none)   56 u64 write seq (0: none)
 * response (opcode = request opcode | 0x80)
 *   16 u16 status      18 u16 reserved      20 u32 error block index (PI errors, relative)
 *   24 u64 error lba   32 u64 expected      40 u64 actual   48..63 reserved
 * HELLO / HELLO_REPLY
 *   16 u32 max transfer bytes   20 u16 queue depth   22 u16 queue index   24 u8 digests
 *   25 u8 features (asked / granted)   26..31 reserved   32 u64 session id   40..63 reserved
 *   features: bit 0 path states, bit 1 metadata-only reads (READ flag bit 5: the response carries metadata alone)
 * PATH_STATES (feature bit 0; response 0x95, payload: spi.wire.PathReportCodec)
 *   16 u32 reserved   20 u32 longest wait (ms)   24 u64 change counter the host knows   32..63 reserved
 * then: [u32 header digest] payload [u32 data digest, when the payload is not empty]
 * </pre>
 */
public final class Protocol {
    private Protocol() {
    }

    public static final int MAGIC = 0x50495443;
    public static final int VERSION = 1;
    public static final int HEADER_SIZE = 64;
    public static final int DIGEST_SIZE = 4;

    // opcodes
    public static final int OP_HELLO = 0x01;
    public static final int OP_READ = 0x10;
    public static final int OP_WRITE = 0x11;
    public static final int OP_FLUSH = 0x12;
    public static final int OP_WRITE_ZEROES = 0x13;
    public static final int OP_DEALLOCATE = 0x14;
    /** A query of the target's path states, answered once they differ from what the host knows (a feature). */
    public static final int OP_PATH_STATES = 0x15;
    /** A request for the target's volume list again, answered at once with it (a feature). */
    public static final int OP_VOLUMES = 0x16;
    public static final int RESPONSE = 0x80;
    public static final int OP_HELLO_REPLY = OP_HELLO | RESPONSE;

    // header offsets
    public static final int O_MAGIC = 0;
    public static final int O_VERSION = 4;
    public static final int O_OPCODE = 5;
    public static final int O_FLAGS = 6;
    public static final int O_COMMAND_ID = 8;
    public static final int O_PAYLOAD_LENGTH = 12;
    public static final int O_VOLUME = 16;
    public static final int O_BLOCKS = 20;
    public static final int O_LBA = 24;
    public static final int O_REF_TAG = 32;
    public static final int O_APP_TAG = 40;
    public static final int O_APP_MASK = 42;
    /** The host connection's {@link io.pistore.spi.WriteFence}: on writes, zero writes and deallocations. */
    public static final int O_FENCE_EPOCH = 44;
    public static final int O_FENCE_KEY = 48;
    /** A fenced write's number in its host stream ({@link io.pistore.spi.WriteFence#seq}); 0: none. */
    public static final int O_FENCE_SEQ = 56;
    public static final int O_STATUS = 16;
    public static final int O_ERROR_BLOCK = 20;
    public static final int O_ERROR_LBA = 24;
    public static final int O_EXPECTED = 32;
    public static final int O_ACTUAL = 40;
    public static final int O_MAX_TRANSFER = 16;
    public static final int O_QUEUE_DEPTH = 20;
    public static final int O_QUEUE_INDEX = 22;
    public static final int O_DIGESTS = 24;
    public static final int O_SESSION = 32;
    public static final int O_FEATURES = 25;
    public static final int O_WAIT_MS = 20;
    public static final int O_KNOWN_COUNTER = 24;

    // request flags
    public static final int F_FUA = 1;
    public static final int F_PRACT = 1 << 1;
    public static final int F_CHECK_GUARD = 1 << 2;
    public static final int F_CHECK_APP = 1 << 3;
    public static final int F_CHECK_REF = 1 << 4;
    public static final int F_KNOWN = F_FUA | F_PRACT | F_CHECK_GUARD | F_CHECK_APP | F_CHECK_REF;
    /**
     * A READ of the blocks' metadata alone (the response carries {@code blocks x META} bytes): only
     * with {@link #FEATURE_METADATA_READS} granted, and alone (no other flag).
     */
    public static final int F_METADATA_ONLY = 1 << 5;

    // digests (HELLO)
    public static final int DIGEST_HEADER = 1;
    public static final int DIGEST_DATA = 2;

    // features (HELLO asks, HELLO_REPLY grants a subset; unknown bits asked are not granted)
    public static final int FEATURE_PATH_STATES = 1;
    /** READ with {@link #F_METADATA_ONLY}: the target serves reads of metadata alone (block status). */
    public static final int FEATURE_METADATA_READS = 1 << 1;
    /** VOLUMES: the target lists its volumes again on a connection already greeted. */
    public static final int FEATURE_VOLUME_LIST = 1 << 2;
    /** Status NO_SPACE in answers; a host without it gets MEDIA_ERROR for a target whose storage is full. */
    public static final int FEATURE_NO_SPACE = 1 << 3;
    /** Longest a target holds one PATH_STATES query. */
    public static final int MAX_PATH_WAIT_MS = 60_000;

    /** Largest payload of any frame before HELLO has negotiated the maximum transfer (the volume list). */
    public static final int MAX_HANDSHAKE_PAYLOAD = 1 << 20;
    /** Largest error message carried by a failure response. */
    public static final int MAX_MESSAGE = 1024;
    /** Most volumes one HELLO_REPLY lists. */
    public static final int MAX_VOLUMES = 65536;

    public static boolean isRequest(int op) {
        return op == OP_READ || op == OP_WRITE || op == OP_FLUSH || op == OP_WRITE_ZEROES || op == OP_DEALLOCATE;
    }

    public static int opcode(Operation op) {
        switch (op) {
            case READ: return OP_READ;
            case WRITE: return OP_WRITE;
            case FLUSH: return OP_FLUSH;
            case WRITE_ZEROES: return OP_WRITE_ZEROES;
            case DEALLOCATE: return OP_DEALLOCATE;
            default: throw new IllegalArgumentException("no opcode for " + op);
        }
    }

    /** The operation of a request opcode (the reverse of {@link #opcode}). */
    public static Operation operation(int opcode) {
        switch (opcode) {
            case OP_READ: return Operation.READ;
            case OP_WRITE: return Operation.WRITE;
            case OP_FLUSH: return Operation.FLUSH;
            case OP_WRITE_ZEROES: return Operation.WRITE_ZEROES;
            case OP_DEALLOCATE: return Operation.DEALLOCATE;
            default: throw new IllegalArgumentException("no operation for opcode " + opName(opcode));
        }
    }

    public static String opName(int op) {
        switch (op) {
            case OP_HELLO: return "HELLO";
            case OP_HELLO_REPLY: return "HELLO_REPLY";
            case OP_READ: return "READ";
            case OP_WRITE: return "WRITE";
            case OP_FLUSH: return "FLUSH";
            case OP_WRITE_ZEROES: return "WRITE_ZEROES";
            case OP_DEALLOCATE: return "DEALLOCATE";
            case OP_PATH_STATES: return "PATH_STATES";
            case OP_VOLUMES: return "VOLUMES";
            default:
                int req = op & ~RESPONSE;
                if ((op & RESPONSE) != 0 && (isRequest(req) || req == OP_PATH_STATES || req == OP_VOLUMES)) {
                    return opName(op & ~RESPONSE) + "_RESPONSE";
                }
                return "0x" + Integer.toHexString(op);
        }
    }

    public static int checkFlags(CheckFlags c) {
        return (c.guard() ? F_CHECK_GUARD : 0) | (c.app() ? F_CHECK_APP : 0) | (c.ref() ? F_CHECK_REF : 0);
    }

    public static CheckFlags checkFlags(int flags) {
        return CheckFlags.of((flags & F_CHECK_GUARD) != 0, (flags & F_CHECK_APP) != 0, (flags & F_CHECK_REF) != 0);
    }

    // Status codes on the wire: fixed numbers, never the enum's ordinal.
    private static final Status[] STATUS_BY_CODE = {
        Status.SUCCESS, Status.LBA_OUT_OF_RANGE, Status.INVALID_FIELD, Status.NO_SUCH_VOLUME, Status.GUARD_CHECK,
        Status.APP_TAG_CHECK, Status.REF_TAG_CHECK, Status.QUEUE_FULL, Status.TRANSPORT_ERROR, Status.MEDIA_ERROR,
        Status.INTERNAL_ERROR, Status.ACCESS_DENIED, Status.FENCED, Status.NO_SPACE,
        Status.VIEW_CHANGED, // never sent: the wire carries no shared-state view, so no write is refused for one
    };

    public static int statusCode(Status s) {
        for (int i = 0; i < STATUS_BY_CODE.length; i++) {
            if (STATUS_BY_CODE[i] == s) {
                return i;
            }
        }
        throw new IllegalArgumentException("no wire code for " + s);
    }

    /** The status of a wire code, or null for an unknown code. */
    public static Status status(int code) {
        return code >= 0 && code < STATUS_BY_CODE.length ? STATUS_BY_CODE[code] : null;
    }
}
