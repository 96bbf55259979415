package io.pistore.replication.raft;

import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * What applying one log entry did on one replica, sent back to the writer by the leader: done, refused
 * because the data failed its PI check (nothing stored), or failed (the local volume's I/O error, or
 * a command that does not fit the volume), or fenced (a stale copy of a write its host sent again on a
 * newer connection, {@link WriteFences}; nothing stored). Layout: {@code code(1)}, then for a refusal
 * {@code kind(1) lba(8) expected(8) actual(8)}, for a failure (code 2) or a fenced write (code 4) a UTF-8 line.
 */
public final class ApplyOutcome {
    enum Code { DONE, REFUSED_PI, FAILED, FENCED }

    private static final ApplyOutcome DONE = new ApplyOutcome(Code.DONE, -1, null, null);

    final Code code;
    /** For a refusal: the absolute LBA of the first failing block and its error. */
    final long lba;
    final PiError error;
    final String message;

    private ApplyOutcome(Code code, long lba, PiError error, String message) {
        this.code = code;
        this.lba = lba;
        this.error = error;
        this.message = message;
    }

    public static ApplyOutcome done() {
        return DONE;
    }

    public static ApplyOutcome refused(long lba, PiError error) {
        return new ApplyOutcome(Code.REFUSED_PI, lba, error, null);
    }

    public static ApplyOutcome failed(String message) {
        return new ApplyOutcome(Code.FAILED, -1, null, message);
    }

    public static ApplyOutcome fenced(String message) {
        return new ApplyOutcome(Code.FENCED, -1, null, message);
    }

    /** A stale copy of a write, refused ({@link WriteFences}). */
    public boolean isFenced() {
        return code == Code.FENCED;
    }

    public boolean isDone() {
        return code == Code.DONE;
    }

    /** One line: what went wrong. */
    public String describe() {
        switch (code) {
            case DONE:
                return "done";
            case REFUSED_PI:
                return "refused, PI check failed at lba=" + lba + " error=" + error.kind().shortName() + " expected=0x"
                        + Long.toHexString(error.expected()) + " actual=0x" + Long.toHexString(error.actual());
            case FENCED:
                return "fenced: " + message;
            default:
                return "failed: " + message;
        }
    }

    public Message encode() {
        if (code == Code.DONE) {
            return Message.valueOf(UnsafeByteOperations.unsafeWrap(new byte[] {0}));
        }
        if (code == Code.REFUSED_PI) {
            ByteBuffer b = ByteBuffer.allocate(26);
            b.put((byte) 1).put((byte) error.kind().ordinal()).putLong(lba).putLong(error.expected()).putLong(error.actual());
            return Message.valueOf(UnsafeByteOperations.unsafeWrap(b.array()));
        }
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        byte[] a = new byte[1 + m.length];
        a[0] = (byte) (code == Code.FENCED ? 4 : 2);
        System.arraycopy(m, 0, a, 1, m.length);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(a));
    }

    /** The outcomes of a batch's commands, in order: {@code 3 count(4)}, then each encoding after its length. */
    public static Message encodeAll(java.util.List<ApplyOutcome> outcomes) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(3);
        out.writeBytes(ByteBuffer.allocate(4).putInt(outcomes.size()).array());
        for (ApplyOutcome o : outcomes) {
            ByteString e = o.encode().getContent();
            out.writeBytes(ByteBuffer.allocate(4).putInt(e.size()).array());
            out.writeBytes(e.toByteArray());
        }
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(out.toByteArray()));
    }

    /** The outcomes in a reply to {@code count} commands: one entry's or a batch's. */
    public static java.util.List<ApplyOutcome> decodeAll(ByteString bytes, int count) {
        if (count == 1) {
            return java.util.List.of(decode(bytes));
        }
        ByteBuffer b = bytes.asReadOnlyByteBuffer();
        if (b.get() != 3 || b.getInt() != count) {
            throw new IllegalArgumentException("reply to a batch of " + count + " commands is not a batch of outcomes");
        }
        java.util.List<ApplyOutcome> out = new java.util.ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int len = b.getInt();
            out.add(decode(bytes.substring(b.position(), b.position() + len)));
            b.position(b.position() + len);
        }
        return out;
    }

    public static ApplyOutcome decode(ByteString bytes) {
        ByteBuffer b = bytes.asReadOnlyByteBuffer();
        byte code = b.get();
        if (code == 0) {
            return DONE;
        }
        if (code == 1) {
            PiErrorKind kind = PiErrorKind.values()[b.get()];
            long lba = b.getLong();
            return refused(lba, new PiError(kind, 0, b.getLong(), b.getLong()));
        }
        byte[] m = new byte[b.remaining()];
        b.get(m);
        String text = new String(m, StandardCharsets.UTF_8);
        return code == 4 ? fenced(text) : failed(text);
    }
}
