package io.pistore.replication.raft;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * A replicated volume's format and size as a replica answers an info query, so a client that knows
 * only the volume's name and peers can open it: one UTF-8 line,
 * {@code blocks dataSize metadataSize guard type location}.
 */
public final class VolumeShape {
    public final BlockFormat format;
    public final long blocks;

    VolumeShape(BlockFormat format, long blocks) {
        this.format = format;
        this.blocks = blocks;
    }

    Message encode() {
        String line = blocks + " " + format.dataSize() + " " + format.metadataSize() + " " + format.guard().cliName() + " "
                + format.type().number() + " " + format.location().name().toLowerCase(Locale.ROOT);
        return Message.valueOf(ByteString.copyFrom(line, StandardCharsets.UTF_8));
    }

    public static VolumeShape decode(ByteString bytes) {
        String[] f = bytes.toString(StandardCharsets.UTF_8).trim().split(" ");
        if (f.length != 6) {
            throw new IllegalArgumentException("volume info '" + bytes.toString(StandardCharsets.UTF_8) + "' has "
                    + f.length + " fields, not 6");
        }
        return new VolumeShape(BlockFormat.of(Integer.parseInt(f[1]), Integer.parseInt(f[2]), GuardType.parse(f[3]),
                PiType.of(Integer.parseInt(f[4])), PiLocation.parse(f[5])), Long.parseLong(f[0]));
    }
}
