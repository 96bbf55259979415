package io.pistore.transport.rdma.internal;

import io.pistore.spi.VolumeInfo;
import io.pistore.spi.wire.VolumeListCodec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The DISCOVER payload: the shared {@link VolumeListCodec} (the same list tcp's HELLO_REPLY
 * carries), ids in list order; commands name volumes by name.
 */
final class VolumeList {
    /** Most volumes one DISCOVER response lists. */
    static final int MAX_VOLUMES = 65536;

    private VolumeList() {
    }

    /** The list of {@code vols} that fits {@code maxBytes} (the host's discovery buffer). */
    static byte[] encode(List<VolumeInfo> vols, int maxBytes) {
        List<VolumeListCodec.Entry> entries = new ArrayList<>(vols.size());
        for (int i = 0; i < vols.size(); i++) {
            entries.add(new VolumeListCodec.Entry(i, vols.get(i)));
        }
        return VolumeListCodec.encode(entries, maxBytes, MAX_VOLUMES);
    }

    /** Decodes a list; a malformed one is refused with its reason. */
    static List<VolumeInfo> decode(byte[] a) throws VolumeListCodec.MalformedListException {
        List<VolumeInfo> l = new ArrayList<>();
        for (VolumeListCodec.Entry e : VolumeListCodec.decode(ByteBuffer.wrap(a), MAX_VOLUMES)) {
            l.add(e.info());
        }
        return l;
    }
}
