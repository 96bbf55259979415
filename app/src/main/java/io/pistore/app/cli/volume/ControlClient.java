package io.pistore.app.cli.volume;

import io.pistore.app.cli.CliException;
import io.pistore.server.control.ControlSocket;
import io.pistore.server.control.VolumeChange;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** Sends one {@link VolumeChange} to the server that owns a data directory (see {@link ControlSocket}). */
public final class ControlClient {
    private ControlClient() {
    }

    /** Whether a server listens for control requests in {@code dir} (its socket file exists). */
    public static boolean available(Path dir) {
        return Files.exists(dir.resolve(ControlSocket.FILE));
    }

    /**
     * The lines the server answered; a refusal is a {@link CliException}: a usage error for what
     * the caller asked wrongly, a failure for what went wrong at the server.
     */
    public static List<String> send(Path dir, VolumeChange change) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(dir.resolve(ControlSocket.FILE).toAbsolutePath()));
            ByteBuffer req = ByteBuffer.wrap((change.encode() + "\n").getBytes(StandardCharsets.UTF_8));
            while (req.hasRemaining()) {
                c.write(req);
            }
            InputStream in = Channels.newInputStream(c);
            String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            List<String> lines = Arrays.asList(reply.split("\n"));
            if (lines.get(0).equals("ok")) {
                return lines.subList(1, lines.size());
            }
            String[] err = lines.get(0).split("\t", 3);
            if (err.length == 3 && err[0].equals("error")) {
                throw err[1].equals("usage") ? CliException.usage(err[2]) : CliException.failure(err[2]);
            }
            throw CliException.failure("the server answered '" + lines.get(0) + "'");
        }
    }
}
