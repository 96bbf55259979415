package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The discovery payload: per volume u16 name length, name, u64 blocks, u32 data, u32 meta, u8 guard, u8 type, u8 location. */
final class VolumeList {
    private VolumeList() {
    }

    static byte[] encode(List<VolumeInfo> vols) {
        ByteBuffer b = ByteBuffer.allocate(64 * 1024);
        for (VolumeInfo v : vols) {
            byte[] n = v.name().getBytes(StandardCharsets.UTF_8);
            if (b.remaining() < n.length + 21) {
                break;
            }
            BlockFormat f = v.format();
            b.putShort((short) n.length).put(n).putLong(v.blockCount()).putInt(f.dataSize()).putInt(f.metadataSize())
                    .put((byte) f.guard().ordinal()).put((byte) f.type().number()).put((byte) f.location().ordinal());
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    static List<VolumeInfo> decode(byte[] a) {
        ByteBuffer b = ByteBuffer.wrap(a);
        List<VolumeInfo> l = new ArrayList<>();
        while (b.remaining() > 0) {
            byte[] n = new byte[b.getShort() & 0xFFFF];
            b.get(n);
            long blocks = b.getLong();
            int ds = b.getInt();
            int ms = b.getInt();
            GuardType g = GuardType.values()[b.get()];
            PiType t = PiType.of(b.get());
            PiLocation loc = PiLocation.values()[b.get()];
            l.add(new VolumeInfo(new String(n, StandardCharsets.UTF_8), blocks, BlockFormat.of(ds, ms, g, t, loc)));
        }
        return l;
    }
}
