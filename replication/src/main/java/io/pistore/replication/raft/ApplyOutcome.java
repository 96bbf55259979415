package io.pistore.replication.raft;

import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.replication.ReplicationException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * What applying one log entry did on one replica, sent back to the writer by the leader: done, refused
 * because the data failed its PI check (nothing stored), or failed (the local volume's I/O error, or
 * a command that does not fit the volume), or fenced (a stale copy of a write its host sent again on a
 * newer connection, {@link WriteFences}; nothing stored), or refused because it was checked against
 * another version of the volume's shared state ({@link io.pistore.spi.WriteFence#view}; nothing stored),
 * or, for a change of the shared state, whether it was set and the version it left. Layout:
 * {@code code(1)}, then for a refusal {@code kind(1) lba(8) expected(8) actual(8)}, for a failure (code 2),
 * a fenced write (code 4) or a write of another view (code 5) a UTF-8 line, for a shared-state change
 * (code 6) {@code set(1) version(8)}, for a compare that found a difference (code 7) {@code offset(8)}.
 */
public final class ApplyOutcome {
    enum Code { DONE, REFUSED_PI, FAILED, FENCED, VIEW_CHANGED, SHARED, MISCOMPARE }

    private static final ApplyOutcome DONE = new ApplyOutcome(Code.DONE, -1, null, null);
    /** For a shared-state change: whether it was set; {@link #lba} holds the version it left. */
    private final boolean set;

    final Code code;
    /** For a refusal: the absolute LBA of the first failing block and its error. */
    final long lba;
    final PiError error;
    final String message;

    private ApplyOutcome(Code code, long lba, PiError error, String message) {
        this(code, lba, error, message, false);
    }

    private ApplyOutcome(Code code, long lba, PiError error, String message, boolean set) {
        this.set = set;
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

    /** A write checked against shared-state version {@code view}, refused at version {@code current}. */
    public static ApplyOutcome viewChanged(ReplicaCommand c, long view, long current) {
        return new ApplyOutcome(Code.VIEW_CHANGED, -1, null, c + " was checked against version " + view
                + " of the volume's shared state, which is at version " + current + " now; nothing written");
    }

    /** A change of the shared state: {@code set} or not, leaving it at {@code version}. */
    public static ApplyOutcome shared(boolean set, long version) {
        return new ApplyOutcome(Code.SHARED, version, null, null, set);
    }

    /** A compare and write that wrote nothing: byte {@code offset} of the blocks compared differs. */
    public static ApplyOutcome miscompare(long offset) {
        return new ApplyOutcome(Code.MISCOMPARE, offset, null, null);
    }

    /** Of a compare and write: the offset of the first byte that differed, or -1 when it wrote. */
    public long miscompareOffset() {
        return code == Code.MISCOMPARE ? lba : -1;
    }

    /** A write refused: checked against a version of the shared state that has changed since. */
    public boolean isViewChanged() {
        return code == Code.VIEW_CHANGED;
    }

    /** The outcome of a shared-state change ({@link #sharedSet}, {@link #sharedVersion}). */
    public boolean isShared() {
        return code == Code.SHARED;
    }

    /** Of a shared-state change: whether the value was set. */
    public boolean sharedSet() {
        return set;
    }

    /** Of a shared-state change: the version it left (the entry's when set, else the one that came first). */
    public long sharedVersion() {
        return lba;
    }

    /** A stale copy of a write, refused ({@link WriteFences}). */
    public boolean isFenced() {
        return code == Code.FENCED;
    }

    public boolean isDone() {
        return code == Code.DONE;
    }

    /**
     * What the writer of a command with this outcome, not done, fails with ({@code line} its message):
     * a {@link io.pistore.engine.volume.FencedWriteException} for a fenced write, a
     * {@link io.pistore.engine.volume.ViewChangedException} for a write of another view, a
     * {@link io.pistore.engine.volume.PiRefusedException} for PI a replica refused, else a
     * {@link ReplicationException}.
     */
    public java.io.IOException failure(String line) {
        return code == Code.FENCED ? new io.pistore.engine.volume.FencedWriteException(line)
                : code == Code.VIEW_CHANGED ? new io.pistore.engine.volume.ViewChangedException(line)
                : code == Code.REFUSED_PI ? new io.pistore.engine.volume.PiRefusedException(line, lba, error)
                : new ReplicationException(line);
    }

    /** What {@code what}, a write refused for {@code error} at {@code lba} before it was sent, fails with. */
    public static java.io.IOException refusedWrite(String what, long lba, PiError error) {
        ApplyOutcome o = refused(lba, error);
        return o.failure(what + " " + o.describe());
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
            case VIEW_CHANGED:
                return "view changed: " + message;
            case SHARED:
                return (set ? "shared state set at version " : "shared state not set, at version ") + lba;
            case MISCOMPARE:
                return "miscompare at byte " + lba + ", nothing written";
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
        if (code == Code.SHARED) {
            return Message.valueOf(UnsafeByteOperations.unsafeWrap(ByteBuffer.allocate(10).put((byte) 6)
                    .put((byte) (set ? 1 : 0)).putLong(lba).array()));
        }
        if (code == Code.MISCOMPARE) {
            return Message.valueOf(UnsafeByteOperations.unsafeWrap(ByteBuffer.allocate(9).put((byte) 7).putLong(lba).array()));
        }
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        byte[] a = new byte[1 + m.length];
        a[0] = (byte) (code == Code.FENCED ? 4 : code == Code.VIEW_CHANGED ? 5 : 2);
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
        ByteBuffer b = bytes.asReadOnlyByteBuffer().slice(); // positions from 0: the bytes may be a view into a larger array
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
        if (code == 6) {
            boolean set = b.get() != 0;
            return shared(set, b.getLong());
        }
        if (code == 7) {
            return miscompare(b.getLong());
        }
        byte[] m = new byte[b.remaining()];
        b.get(m);
        String text = new String(m, StandardCharsets.UTF_8);
        return code == 4 ? fenced(text) : code == 5 ? new ApplyOutcome(Code.VIEW_CHANGED, -1, null, text) : failed(text);
    }
}
