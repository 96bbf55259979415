package io.pistore.spi.wire;

import io.pistore.spi.PathReport;
import io.pistore.spi.PathState;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A peer's {@link PathReport} as every network transport carries it (tcp's PATH_STATES response;
 * the layout is in docs/PROTOCOL-TCP.md). Volumes are named, not numbered, so the same bytes serve
 * a transport whose commands name volumes by name. Decoding checks every count, length and code
 * against the bytes present and refuses bad input with a one-line reason.
 *
 * <pre>
 * u64 change counter (not 0)   u32 count, then per volume:
 *   u8 state (0 optimized, 1 non-optimized, 2 inaccessible)   u8 name length (1..64)   name (ASCII)
 * </pre>
 */
public final class PathReportCodec {
    private PathReportCodec() {
    }

    /** Encodes {@code r}; volumes that would pass {@code maxBytes}, or whose name is empty or too long, are left out. */
    public static byte[] encode(PathReport r, int maxBytes) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(12, Math.min(maxBytes, 12 + r.states().size() * (2 + VolumeListCodec.MAX_NAME))));
        b.putLong(r.counter()).putInt(0);
        int n = 0;
        for (Map.Entry<String, PathState> e : r.states().entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.US_ASCII);
            if (name.length == 0 || name.length > VolumeListCodec.MAX_NAME || b.remaining() < 2 + name.length) {
                continue;
            }
            b.put((byte) e.getValue().code()).put((byte) name.length).put(name);
            n++;
        }
        b.putInt(8, n);
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    /** Decodes a report from {@code b}'s remaining bytes, all of which it must use. */
    public static PathReport decode(ByteBuffer b) throws VolumeListCodec.MalformedListException {
        if (b.remaining() < 12) {
            throw malformed("path report of " + b.remaining() + " bytes (at least 12)");
        }
        long counter = b.getLong();
        if (counter == 0) {
            throw malformed("path report with change counter 0");
        }
        long count = b.getInt() & 0xFFFFFFFFL;
        if (count > b.remaining() / 3) {
            throw malformed("path report of " + count + " volumes in " + b.remaining() + " bytes");
        }
        Map<String, PathState> m = new LinkedHashMap<>();
        for (long i = 0; i < count; i++) {
            if (b.remaining() < 2) {
                throw malformed("path report ends inside volume " + i);
            }
            int code = b.get() & 0xFF;
            PathState s = PathState.of(code);
            if (s == null) {
                throw malformed("unknown path state " + code);
            }
            int len = b.get() & 0xFF;
            if (len == 0 || len > VolumeListCodec.MAX_NAME || len > b.remaining()) {
                throw malformed("path report name of " + len + " bytes with " + b.remaining() + " left");
            }
            byte[] name = new byte[len];
            b.get(name);
            if (m.put(new String(name, StandardCharsets.US_ASCII), s) != null) {
                throw malformed("path report names volume " + new String(name, StandardCharsets.US_ASCII) + " twice");
            }
        }
        if (b.hasRemaining()) {
            throw malformed(b.remaining() + " bytes after the path report");
        }
        return new PathReport(counter, m);
    }

    private static VolumeListCodec.MalformedListException malformed(String why) {
        return new VolumeListCodec.MalformedListException(why);
    }
}
