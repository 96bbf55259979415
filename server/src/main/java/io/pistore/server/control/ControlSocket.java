package io.pistore.server.control;

import io.pistore.engine.volume.VolumeStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * The local control path of {@code pistore serve}: a Unix domain socket {@code .control} in the data
 * directory, through which {@code pistore volume} commands change the volumes of the server that
 * owns the directory (the directory's lock keeps them from opening it themselves). Who may write in
 * the data directory may use it; nothing listens on a network. One request per connection: a line
 * ({@link VolumeChange#encode()}), answered by {@code ok} and the lines to print, or by
 * {@code error<TAB>usage|failure<TAB>message}; then the server closes the connection.
 */
public final class ControlSocket implements AutoCloseable {
    public static final String FILE = ".control";
    private static final int MAX_REQUEST = 4096;

    private final Path path;
    private final ServerSocketChannel listener;
    private final VolumeStore store;
    private final VolumeUse use;
    private final Consumer<String> log;
    private final Thread acceptor;
    /** Joins replicated volumes' groups; null where the server runs no replica peer. */
    private volatile ReplicaJoiner joiner;

    private ControlSocket(Path path, ServerSocketChannel listener, VolumeStore store, VolumeUse use,
                          Consumer<String> log) {
        this.path = path;
        this.listener = listener;
        this.store = store;
        this.use = use;
        this.log = log;
        this.acceptor = new Thread(this::acceptLoop, "pistore-control");
        this.acceptor.setDaemon(true);
    }

    /**
     * Listens on {@code dir/.control}. The caller owns the directory's lock, so a socket file there
     * is a leftover of a server that died, and is replaced.
     */
    public static ControlSocket start(Path dir, VolumeStore store, VolumeUse use, Consumer<String> log) throws IOException {
        Path path = dir.resolve(FILE).toAbsolutePath();
        Files.deleteIfExists(path);
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.bind(UnixDomainSocketAddress.of(path));
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw new IOException("cannot listen on " + path + ": " + e.getMessage(), e);
        }
        ControlSocket s = new ControlSocket(path, ch, store, use, log);
        s.acceptor.start();
        return s;
    }

    /** Lets replica-join requests through to this server's replica peer. */
    public void serveReplicas(ReplicaJoiner j) {
        this.joiner = j;
    }

    public Path path() {
        return path;
    }

    private void acceptLoop() {
        while (true) {
            SocketChannel c;
            try {
                c = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                log.accept("control: accept failed: " + e.getMessage());
                return;
            }
            // A thread per request: one that never sends its line stalls only itself.
            Thread t = new Thread(() -> serve(c), "pistore-control-request");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(SocketChannel c) {
        try (c) {
            String reply;
            try {
                VolumeChange change = VolumeChange.decode(readLine(c));
                ReplicaJoiner j = joiner;
                List<String> lines = change.verb().equals(VolumeChange.JOIN_REPLICA) ? join(change)
                        : change.verb().equals("delete") && j != null && j.replicated(change.args().get(0))
                        ? j.delete(change.args().get(0), Boolean.parseBoolean(change.args().get(1)), use)
                        : change.apply(store, use);
                if (!change.verb().equals("list")) {
                    log.accept("control: " + String.join("; ", lines));
                }
                reply = "ok\n" + String.join("\n", lines) + "\n";
            } catch (IllegalArgumentException e) {
                reply = "error\tusage\t" + oneLine(e.getMessage()) + "\n";
            } catch (IOException | RuntimeException e) {
                log.accept("control: request failed: " + e.getMessage());
                reply = "error\tfailure\t" + oneLine(String.valueOf(e.getMessage())) + "\n";
            }
            ByteBuffer out = ByteBuffer.wrap(reply.getBytes(StandardCharsets.UTF_8));
            while (out.hasRemaining()) {
                c.write(out);
            }
        } catch (IOException e) {
            log.accept("control: " + e.getMessage());
        }
    }

    private List<String> join(VolumeChange change) throws IOException {
        ReplicaJoiner j = joiner;
        if (j == null) {
            throw new IllegalArgumentException("this serve runs no replica peer: start it with --replica-id and "
                    + "--replica-listen");
        }
        return j.join(change.args().get(0), change.args().get(1),
                change.args().get(2).isEmpty() ? null : change.args().get(2));
    }

    private static String readLine(SocketChannel c) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(256);
        while (line.size() <= MAX_REQUEST) {
            b.clear();
            if (c.read(b) < 0) {
                throw new IllegalArgumentException("control request ended before its newline");
            }
            b.flip();
            while (b.hasRemaining()) {
                byte x = b.get();
                if (x == '\n') {
                    return line.toString(StandardCharsets.UTF_8);
                }
                line.write(x);
            }
        }
        throw new IllegalArgumentException("control request longer than " + MAX_REQUEST + " bytes");
    }

    private static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\t', ' ');
    }

    @Override
    public void close() throws IOException {
        listener.close();
        Files.deleteIfExists(path);
    }
}
