package io.pistore.transport.tcp.internal;

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
 * A volume as the wire knows it: a numeric id, stable for the life of a listener, and its info.
 * Also the codec of the volume list in HELLO_REPLY.
 *
 * <pre>
 * u32 count, then per volume:
 *   u32 id  u64 blocks  u32 data size  u16 metadata size  u8 guard  u8 PI type  u8 PI location
 *   u8 name length (1..64)  name (ASCII)
 * guard: 0 crc16, 1 ip, 2 crc32c, 3 crc64; location: 0 first, 1 last
 * </pre>
 */
final class WireVolume {
    static final int MAX_NAME = 64;
    private static final GuardType[] GUARDS = {GuardType.CRC16, GuardType.IP_CHECKSUM, GuardType.CRC32C, GuardType.CRC64};
    private static final int FIXED = 4 + 8 + 4 + 2 + 1 + 1 + 1 + 1;

    final int id;
    final VolumeInfo info;

    WireVolume(int id, VolumeInfo info) {
        this.id = id;
        this.info = info;
    }

    static int encodedSize(VolumeInfo v) {
        return FIXED + v.name().getBytes(StandardCharsets.US_ASCII).length;
    }

    static byte[] encode(List<WireVolume> vols, int maxBytes) {
        int size = 4;
        List<WireVolume> fit = new ArrayList<>();
        for (WireVolume v : vols) {
            int s = encodedSize(v.info);
            if (size + s > maxBytes || v.info.name().length() > MAX_NAME || fit.size() == Protocol.MAX_VOLUMES) {
                continue; // not listed: a list that does not fit the handshake limit is cut
            }
            size += s;
            fit.add(v);
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(fit.size());
        for (WireVolume v : fit) {
            byte[] name = v.info.name().getBytes(StandardCharsets.US_ASCII);
            BlockFormat f = v.info.format();
            b.putInt(v.id).putLong(v.info.blockCount()).putInt(f.dataSize()).putShort((short) f.metadataSize())
                    .put((byte) guardCode(f.guard())).put((byte) f.type().number())
                    .put((byte) (f.location() == PiLocation.FIRST ? 0 : 1)).put((byte) name.length).put(name);
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

    /** Decodes a volume list; every length is checked against the bytes present. */
    static List<WireVolume> decode(ByteBuffer b) throws ProtocolException {
        if (b.remaining() < 4) {
            throw new ProtocolException("volume list of " + b.remaining() + " bytes has no count");
        }
        long count = b.getInt() & 0xFFFFFFFFL;
        if (count > Protocol.MAX_VOLUMES || count * FIXED > b.remaining()) {
            throw new ProtocolException("volume list claims " + count + " volumes in " + b.remaining() + " bytes");
        }
        List<WireVolume> list = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            if (b.remaining() < FIXED) {
                throw new ProtocolException("volume list ends inside entry " + i);
            }
            int id = b.getInt();
            long blocks = b.getLong();
            int ds = b.getInt();
            int ms = b.getShort() & 0xFFFF;
            int g = b.get() & 0xFF;
            int t = b.get() & 0xFF;
            int loc = b.get() & 0xFF;
            int nlen = b.get() & 0xFF;
            if (nlen == 0 || nlen > MAX_NAME || nlen > b.remaining()) {
                throw new ProtocolException("volume list entry " + i + " has a name of " + nlen + " bytes");
            }
            byte[] name = new byte[nlen];
            b.get(name);
            if (g >= GUARDS.length || t > 3 || loc > 1 || blocks <= 0) {
                throw new ProtocolException("volume list entry " + i + " has guard " + g + ", type " + t
                        + ", location " + loc + ", " + blocks + " blocks");
            }
            BlockFormat f;
            try {
                f = BlockFormat.of(ds, ms, GUARDS[g], PiType.of(t), loc == 0 ? PiLocation.FIRST : PiLocation.LAST);
            } catch (IllegalArgumentException e) {
                throw new ProtocolException("volume list entry " + i + ": " + e.getMessage());
            }
            list.add(new WireVolume(id, new VolumeInfo(new String(name, StandardCharsets.US_ASCII), blocks, f)));
        }
        if (b.hasRemaining()) {
            throw new ProtocolException("volume list has " + b.remaining() + " bytes after its last entry");
        }
        return list;
    }
}
