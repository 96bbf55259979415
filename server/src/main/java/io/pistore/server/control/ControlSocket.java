package io.pistore.server.control;

import io.pistore.engine.volume.PrivateFiles;
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
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import java.util.List;
import java.util.function.Consumer;

/**
 * The local control path of {@code pistore serve}: a Unix domain socket {@code .control} in the data
 * directory, through which {@code pistore volume} commands change the volumes of the server that
 * owns the directory (the directory's lock keeps them from opening it themselves). Nothing listens on
 * a network. The socket file is {@code 0600} (inside a {@code 0700} directory), and each connection's
 * peer is read from the kernel ({@code SO_PEERCRED}): only the server's own user and root are served,
 * anyone else gets one refusal line; each accepted request is logged with the caller's user. The
 * JDK's {@code SO_PEERCRED} gives the user and group only, not the peer's pid, so the log names no
 * pid. One request per connection: a line
 * ({@link VolumeChange#encode()}), answered by {@code ok} and the lines to print, or by
 * {@code error<TAB>usage|failure<TAB>message}; then the server closes the connection.
 */
public final class ControlSocket implements AutoCloseable {
    public static final String FILE = ".control";
    private static final int MAX_REQUEST = 4096;

    private final Path path;
    private final ServerSocketChannel listener;
    /** The user this server runs as: the owner of the socket file it made. */
    private final UserPrincipal self;
    private final VolumeStore store;
    private final VolumeUse use;
    private final Consumer<String> log;
    private final Thread acceptor;
    /** Joins replicated volumes' groups; null where the server runs no replica peer. */
    private volatile ReplicaJoiner joiner;

    private ControlSocket(Path path, ServerSocketChannel listener, UserPrincipal self, VolumeStore store,
                          VolumeUse use, Consumer<String> log) {
        this.path = path;
        this.listener = listener;
        this.self = self;
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
        String tooLong = pathTooLong(dir);
        if (tooLong != null) {
            throw new IOException(tooLong);
        }
        Files.deleteIfExists(path);
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        UserPrincipal self;
        try {
            ch.bind(UnixDomainSocketAddress.of(path));
            if (PrivateFiles.posix(path)) {
                Files.setPosixFilePermissions(path, PrivateFiles.FILE);
            }
            self = Files.getOwner(path);
        } catch (IOException | RuntimeException e) {
            ch.close();
            Files.deleteIfExists(path);
            throw new IOException("cannot listen on " + path + ": " + e.getMessage(), e);
        }
        ControlSocket s = new ControlSocket(path, ch, self, store, use, log);
        s.acceptor.start();
        return s;
    }

    /** The most bytes of a Unix socket's path (sun_path less its terminating NUL, on Linux). */
    public static final int MAX_PATH_BYTES = 107;

    /**
     * Why {@code dir}'s control socket cannot exist (its absolute path is longer than a Unix socket
     * address holds) and what to do, or null when it can.
     */
    public static String pathTooLong(Path dir) {
        Path path = dir.resolve(FILE).toAbsolutePath();
        int n = path.toString().getBytes(StandardCharsets.UTF_8).length;
        return n <= MAX_PATH_BYTES ? null : "the control socket " + path + " would be " + n + " bytes, longer than the "
                + MAX_PATH_BYTES + " a Unix socket path may have: give serve and the volume commands a shorter --data "
                + "path (a symlink to the directory will do)";
    }

    /** Lets replica-join requests through to this server's replica peer. */
    public void serveReplicas(ReplicaJoiner j) {
        this.joiner = j;
    }

    public Path path() {
        return path;
    }

    private void acceptLoop() {
        boolean failing = false; // one line per run of failed accepts
        while (true) {
            SocketChannel c;
            try {
                c = listener.accept();
                failing = false;
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!listener.isOpen()) {
                    return;
                }
                // out of descriptors, say: the socket stays and takes the next request after a pause
                if (!failing) {
                    log.accept("control: accept failed (tried again every 100 ms): " + e);
                }
                failing = true;
                try {
                    Thread.sleep(100);
                } catch (InterruptedException stop) {
                    return;
                }
                continue;
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
            String caller = "unknown";
            try {
                UnixDomainPrincipal peer = c.getOption(ExtendedSocketOptions.SO_PEERCRED);
                caller = peer.user().getName();
                String request = readLine(c); // read first: a reply over unread bytes may reach the peer as a reset
                if (!allowed(peer.user())) {
                    String who = self.getName().equals("root") ? "root" : self.getName() + " and root";
                    log.accept("control: refused user " + caller + ": only " + who + " may change this server's volumes");
                    reply = "error\tusage\tthe control socket of " + path.getParent() + " serves only " + who
                            + ", not " + caller + "\n";
                    write(c, reply);
                    return;
                }
                VolumeChange change = VolumeChange.decode(request);
                ReplicaJoiner j = joiner;
                List<String> lines = change.verb().equals(VolumeChange.JOIN_REPLICA) ? join(change)
                        : change.verb().equals(VolumeChange.CREATE_REPLICA) ? replicaPeer().create(change)
                        : change.verb().equals("delete") && j != null && j.replicated(change.args().get(0))
                        ? j.delete(change.args().get(0), Boolean.parseBoolean(change.args().get(1)), use)
                        : change.verb().equals("resize") && j != null && j.replicated(change.args().get(0))
                        ? j.resize(change.args().get(0), Long.parseLong(change.args().get(1)))
                        : change.apply(store, use);
                // one log line per reply line, as the caller prints them (a joined line would run them together)
                List<String> logged = change.verb().equals("list") || lines.isEmpty() ? List.of(change.verb())
                        : lines.stream().filter(l -> !l.startsWith(VolumeChange.SCRUB_RESULT)).toList();
                for (int i = 0; i < logged.size(); i++) {
                    log.accept("control: " + logged.get(i).strip() + (i == 0 ? " (user " + caller + ")" : ""));
                }
                reply = "ok\n" + String.join("\n", lines) + "\n";
            } catch (IllegalArgumentException e) {
                reply = "error\tusage\t" + oneLine(e.getMessage()) + "\n";
            } catch (IOException | RuntimeException e) {
                log.accept("control: request failed: " + e.getMessage());
                reply = "error\tfailure\t" + oneLine(String.valueOf(e.getMessage())) + "\n";
            }
            write(c, reply);
        } catch (IOException e) {
            log.accept("control: " + e.getMessage());
        }
    }

    /** The server's own user, and root. */
    private boolean allowed(UserPrincipal user) throws IOException {
        return user.equals(self) || user.equals(root());
    }

    private static UserPrincipal root() throws IOException {
        return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("root");
    }

    private static void write(SocketChannel c, String reply) throws IOException {
        ByteBuffer out = ByteBuffer.wrap(reply.getBytes(StandardCharsets.UTF_8));
        while (out.hasRemaining()) {
            c.write(out);
        }
    }

    private ReplicaJoiner replicaPeer() {
        ReplicaJoiner j = joiner;
        if (j == null) {
            throw new IllegalArgumentException("this serve runs no replica peer: start it with --replica-id and "
                    + "--replica-listen");
        }
        return j;
    }

    private List<String> join(VolumeChange change) throws IOException {
        ReplicaJoiner j = replicaPeer();
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
