package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.function.Function;

/**
 * The passive side of the connect hello: the TCP control listener beside an RDMA CM listener. Each
 * control connection carries one hello; {@code offer} decides on it (null: accepted, else the reason
 * it is not), and the verdict goes back. A hello that does not decode is refused with the decoder's
 * one line. Each session runs on its own thread, so a slow peer holds up nobody else.
 */
final class HelloServer {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");
    /** How long a control session waits for its hello. */
    static final int SESSION_TIMEOUT_MS = 10_000;

    private final ServerSocket control;
    private final Function<ConnectHello.Hello, String> offer;
    private final Thread acceptor;
    private volatile boolean stopped;

    /** Serves hellos on {@code control} (bound, see {@link #bind}) for the RDMA CM port {@code cmPort}. */
    HelloServer(ServerSocket control, int cmPort, Function<ConnectHello.Hello, String> offer) {
        this.control = control;
        this.offer = offer;
        this.acceptor = new Thread(this::acceptLoop, "pistore-disni-control-" + cmPort);
        this.acceptor.setDaemon(true);
    }

    /**
     * The control socket beside the RDMA CM endpoint {@code cm} ({@code address} as the caller gave
     * it, for the message); a port in use is EINVAL naming it.
     */
    static ServerSocket bind(InetSocketAddress cm, String address) throws IOException {
        ServerSocket control = new ServerSocket();
        InetSocketAddress at = DisniAddress.control(cm);
        try {
            control.setReuseAddress(true);
            control.bind(at);
        } catch (IOException e) {
            control.close();
            throw new VerbsException(VerbsException.EINVAL, "disni: cannot open the control listener on port "
                    + at.getPort() + " beside " + address + ": " + e.getMessage());
        }
        return control;
    }

    void start() {
        acceptor.start();
    }

    /** Stops accepting; sessions under way finish on their own. */
    void close() {
        stopped = true;
        try {
            control.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    private void acceptLoop() {
        while (!stopped) {
            Socket s;
            try {
                s = control.accept();
            } catch (IOException e) {
                if (!stopped) {
                    LOG.log(System.Logger.Level.WARNING, "disni: control listener: " + e.getMessage());
                }
                return;
            }
            Thread t = new Thread(() -> session(s), "pistore-disni-hello");
            t.setDaemon(true);
            t.start();
        }
    }

    /** One hello: {@code offer} decides, the verdict goes back. */
    void session(Socket s) {
        try (s) {
            s.setSoTimeout(SESSION_TIMEOUT_MS);
            DataInputStream in = new DataInputStream(s.getInputStream());
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            ConnectHello.Hello h;
            try {
                h = ConnectHello.decodeHello(ConnectHello.read(in));
            } catch (IOException e) {
                ConnectHello.write(out, ConnectHello.encodeVerdict(false, DisniProbe.firstLine(
                        String.valueOf(e.getMessage()))));
                return;
            }
            String verdict = offer.apply(h);
            ConnectHello.write(out, ConnectHello.encodeVerdict(verdict == null, verdict));
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "disni: control session: " + e.getMessage());
        }
    }
}
