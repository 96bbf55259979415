package io.pistore.frontend.nbd;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Numbers of the NBD protocol (NetworkBlockDevice/nbd doc/proto.md) that the frontend speaks:
 * fixed newstyle handshake, option haggling, simple and structured replies, the
 * {@code base:allocation} meta context.
 */
final class NbdProtocol {
    private NbdProtocol() {
    }

    // Handshake
    static final long NBDMAGIC = 0x4e42444d41474943L;
    static final long IHAVEOPT = 0x49484156454F5054L;
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    static final int FLAG_FIXED_NEWSTYLE = 1;
    static final int FLAG_NO_ZEROES = 1 << 1;
    static final int FLAG_C_FIXED_NEWSTYLE = 1;
    static final int FLAG_C_NO_ZEROES = 1 << 1;

    // Options
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_INFO = 6;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;
    static final int OPT_LIST_META_CONTEXT = 9;
    static final int OPT_SET_META_CONTEXT = 10;

    // Option replies
    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_META_CONTEXT = 4;
    static final int REP_ERR_UNSUP = 0x80000001;
    static final int REP_ERR_POLICY = 0x80000002;
    static final int REP_ERR_INVALID = 0x80000003;
    static final int REP_ERR_TLS_REQD = 0x80000005;
    static final int REP_ERR_UNKNOWN = 0x80000006;
    static final int REP_ERR_SHUTDOWN = 0x80000007;

    // Information types of NBD_OPT_INFO / NBD_OPT_GO
    static final int INFO_EXPORT = 0;
    static final int INFO_NAME = 1;
    static final int INFO_DESCRIPTION = 2;
    static final int INFO_BLOCK_SIZE = 3;

    // Transmission flags
    static final int TF_HAS_FLAGS = 1;
    static final int TF_READ_ONLY = 1 << 1;
    static final int TF_SEND_FLUSH = 1 << 2;
    static final int TF_SEND_FUA = 1 << 3;
    static final int TF_SEND_TRIM = 1 << 5;
    static final int TF_SEND_WRITE_ZEROES = 1 << 6;
    static final int TF_SEND_DF = 1 << 7;
    static final int TF_CAN_MULTI_CONN = 1 << 8;

    // Requests
    static final int REQUEST_MAGIC = 0x25609513;
    static final int REQUEST_HEADER = 28;
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_WRITE_ZEROES = 6;
    static final int CMD_BLOCK_STATUS = 7;
    static final int CMD_FLAG_FUA = 1;
    static final int CMD_FLAG_NO_HOLE = 1 << 1;
    static final int CMD_FLAG_DF = 1 << 2;
    static final int CMD_FLAG_REQ_ONE = 1 << 3;

    // Meta contexts
    static final String BASE_ALLOCATION = "base:allocation";
    /** The id this server gives {@code base:allocation}, its only context. */
    static final int BASE_ALLOCATION_ID = 1;
    static final int STATE_HOLE = 1;
    static final int STATE_ZERO = 1 << 1;

    // Replies
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int SIMPLE_REPLY_HEADER = 16;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    static final int STRUCTURED_REPLY_HEADER = 20;
    static final int REPLY_FLAG_DONE = 1;
    static final int REPLY_TYPE_NONE = 0;
    static final int REPLY_TYPE_OFFSET_DATA = 1;
    static final int REPLY_TYPE_BLOCK_STATUS = 5;
    static final int REPLY_TYPE_ERROR = (1 << 15) + 1;
    static final int REPLY_TYPE_ERROR_OFFSET = (1 << 15) + 2;

    // Error values
    static final int EPERM = 1;
    static final int EIO = 5;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EOVERFLOW = 75;
    static final int ENOTSUP = 95;
    static final int ESHUTDOWN = 108;

    /** Payloads up to this size are never treated as an attack (proto.md, size constraints). */
    static final int PORTABLE_PAYLOAD_LIMIT = 1 << 25;
    /** Longest option the server reads; longer ones end the connection. */
    static final int MAX_OPTION_LENGTH = 16 * 1024;
    /** Longest string the protocol allows (names, messages). */
    static final int MAX_STRING = 4096;
    /** Longest error message this server sends, in bytes. */
    static final int MAX_MESSAGE = 1024;

    /** An error message as the server sends it: UTF-8, cut after {@link #MAX_MESSAGE} bytes. */
    static byte[] message(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_MESSAGE) {
            return b;
        }
        return Arrays.copyOf(b, MAX_MESSAGE);
    }

    static String commandName(int type) {
        switch (type) {
            case CMD_READ: return "READ";
            case CMD_WRITE: return "WRITE";
            case CMD_DISC: return "DISC";
            case CMD_FLUSH: return "FLUSH";
            case CMD_TRIM: return "TRIM";
            case CMD_WRITE_ZEROES: return "WRITE_ZEROES";
            case CMD_BLOCK_STATUS: return "BLOCK_STATUS";
            default: return "command " + type;
        }
    }
}
