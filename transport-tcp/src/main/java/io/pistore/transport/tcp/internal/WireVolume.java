package io.pistore.transport.tcp.internal;

import io.pistore.spi.VolumeInfo;
import io.pistore.spi.wire.VolumeListCodec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A volume as the wire knows it: a numeric id, stable for the life of a listener, and its info.
 * The volume list in HELLO_REPLY is the shared {@link VolumeListCodec}.
 */
final class WireVolume {
    static final int MAX_NAME = VolumeListCodec.MAX_NAME;

    final int id;
    final VolumeInfo info;

    WireVolume(int id, VolumeInfo info) {
        this.id = id;
        this.info = info;
    }

    /** The list of HELLO_REPLY; a list that does not fit the handshake limit is cut. */
    static byte[] encode(List<WireVolume> vols, int maxBytes) {
        List<VolumeListCodec.Entry> entries = new ArrayList<>(vols.size());
        for (WireVolume v : vols) {
            entries.add(new VolumeListCodec.Entry(v.id, v.info));
        }
        return VolumeListCodec.encode(entries, maxBytes, Protocol.MAX_VOLUMES);
    }

    /** A host's view of a list: the volumes by name (with their ids) and their infos in list order. */
    record Listed(Map<String, WireVolume> byName, List<VolumeInfo> infos) {
        static Listed of(List<WireVolume> vols) {
            Map<String, WireVolume> m = new HashMap<>();
            List<VolumeInfo> infos = new ArrayList<>(vols.size());
            for (WireVolume v : vols) {
                m.put(v.info.name(), v);
                infos.add(v.info);
            }
            return new Listed(m, Collections.unmodifiableList(infos));
        }
    }

    /** Decodes a volume list; every length is checked against the bytes present. */
    static List<WireVolume> decode(ByteBuffer b) throws ProtocolException {
        List<VolumeListCodec.Entry> entries;
        try {
            entries = VolumeListCodec.decode(b, Protocol.MAX_VOLUMES);
        } catch (VolumeListCodec.MalformedListException e) {
            throw new ProtocolException(e.getMessage());
        }
        List<WireVolume> list = new ArrayList<>(entries.size());
        for (VolumeListCodec.Entry e : entries) {
            list.add(new WireVolume(e.id(), e.info()));
        }
        return list;
    }
}
