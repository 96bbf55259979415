package io.pistore.spi.wire;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The volume list a target sends at discovery, as every network transport carries it (tcp's
 * HELLO_REPLY, rdma's DISCOVER response); the layout is in docs/PROTOCOL-TCP.md. Decoding checks
 * every count, length and code against the bytes present, so a hostile or damaged list is refused
 * with a one-line reason, never a buffer exception.
 *
 * <pre>
 * u32 count, then per volume:
 *   u32 id  u64 blocks  u32 data size  u16 metadata size  u8 guard  u8 PI type  u8 flags
 *   u8 name length (1..64)  name (ASCII)
 * guard: 0 crc16, 1 ip, 2 crc32c, 3 crc64
 * flags: bit 0 PI location (0 first, 1 last), bit 1 read-only to this host; other bits 0
 * </pre>
 */
public final class VolumeListCodec {
    /** Longest volume name the list carries; a volume with a longer name is not listed. */
    public static final int MAX_NAME = 64;
    private static final GuardType[] GUARDS = {GuardType.CRC16, GuardType.IP_CHECKSUM, GuardType.CRC32C, GuardType.CRC64};
    private static final int FIXED = 4 + 8 + 4 + 2 + 1 + 1 + 1 + 1;
    private static final int FLAG_PI_LAST = 1;
    private static final int FLAG_READ_ONLY = 2;

    private VolumeListCodec() {
    }

    /** One listed volume: the id the transport's commands name it by, and what a host learns of it. */
    public record Entry(int id, VolumeInfo info) {
    }

    /** A list that does not decode, with the reason in one line. */
    public static final class MalformedListException extends Exception {
        private static final long serialVersionUID = 1L;

        public MalformedListException(String reason) {
            super(reason, null, false, false);
        }
    }

    /** Bytes one volume takes in the list. */
    public static int encodedSize(VolumeInfo v) {
        return FIXED + v.name().getBytes(StandardCharsets.US_ASCII).length;
    }

    /**
     * Encodes as many volumes as fit in {@code maxBytes} and {@code maxVolumes}, in order; a volume
     * that does not fit, or whose name is empty or longer than {@link #MAX_NAME}, is left out.
     */
    public static byte[] encode(List<Entry> vols, int maxBytes, int maxVolumes) {
        int size = 4;
        List<Entry> fit = new ArrayList<>();
        for (Entry v : vols) {
            int s = encodedSize(v.info());
            int nameLength = v.info().name().length();
            if (size + s > maxBytes || nameLength == 0 || nameLength > MAX_NAME || fit.size() == maxVolumes) {
                continue;
            }
            size += s;
            fit.add(v);
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(fit.size());
        for (Entry v : fit) {
            byte[] name = v.info().name().getBytes(StandardCharsets.US_ASCII);
            BlockFormat f = v.info().format();
            b.putInt(v.id()).putLong(v.info().blockCount()).putInt(f.dataSize()).putShort((short) f.metadataSize())
                    .put((byte) guardCode(f.guard())).put((byte) f.type().number())
                    .put((byte) ((f.location() == PiLocation.FIRST ? 0 : FLAG_PI_LAST)
                            | (v.info().readOnly() ? FLAG_READ_ONLY : 0)))
                    .put((byte) name.length).put(name);
        }
        return b.array();
    }

    private static int guardCode(GuardType g) {
        for (int i = 0; i < GUARDS.length; i++) {
            if (GUARDS[i] == g) {
                return i;
            }
        }
        throw new IllegalArgumentException("no wire code for guard " + g);
    }

    /** Decodes a whole list; every length is checked against the bytes present. */
    public static List<Entry> decode(ByteBuffer b, int maxVolumes) throws MalformedListException {
        if (b.remaining() < 4) {
            throw new MalformedListException("volume list of " + b.remaining() + " bytes has no count");
        }
        long count = b.getInt() & 0xFFFFFFFFL;
        if (count > maxVolumes || count * FIXED > b.remaining()) {
            throw new MalformedListException("volume list claims " + count + " volumes in " + b.remaining() + " bytes");
        }
        List<Entry> list = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            if (b.remaining() < FIXED) {
                throw new MalformedListException("volume list ends inside entry " + i);
            }
            int id = b.getInt();
            long blocks = b.getLong();
            int ds = b.getInt();
            int ms = b.getShort() & 0xFFFF;
            int g = b.get() & 0xFF;
            int t = b.get() & 0xFF;
            int flags = b.get() & 0xFF;
            int nlen = b.get() & 0xFF;
            if (nlen == 0 || nlen > MAX_NAME || nlen > b.remaining()) {
                throw new MalformedListException("volume list entry " + i + " has a name of " + nlen + " bytes");
            }
            byte[] name = new byte[nlen];
            b.get(name);
            if (g >= GUARDS.length || t > 3 || (flags & ~(FLAG_PI_LAST | FLAG_READ_ONLY)) != 0 || blocks <= 0) {
                throw new MalformedListException("volume list entry " + i + " has guard " + g + ", type " + t
                        + ", flags 0x" + Integer.toHexString(flags) + ", " + blocks + " blocks");
            }
            BlockFormat f;
            try {
                f = BlockFormat.of(ds, ms, GUARDS[g], PiType.of(t), (flags & FLAG_PI_LAST) == 0 ? PiLocation.FIRST : PiLocation.LAST);
            } catch (IllegalArgumentException e) {
                throw new MalformedListException("volume list entry " + i + ": " + e.getMessage());
            }
            list.add(new Entry(id, new VolumeInfo(new String(name, StandardCharsets.US_ASCII), blocks, f,
                    (flags & FLAG_READ_ONLY) != 0)));
        }
        if (b.hasRemaining()) {
            throw new MalformedListException("volume list has " + b.remaining() + " bytes after its last entry");
        }
        return list;
    }
}
