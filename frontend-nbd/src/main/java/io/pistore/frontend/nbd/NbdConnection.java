package io.pistore.frontend.nbd;

import io.pistore.spi.net.PolitePoll;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.SocketChannel;

/**
 * One client connection, on a thread of its own: the fixed newstyle handshake
 * ({@link NbdHandshake}), then the transmission phase ({@link NbdTransmission}), then one log line
 * that says why it ended.
 *
 * <p>The socket is non-blocking and has its own selector ({@link NbdSocket}). The connection's thread
 * does the handshake (each message within the handshake timeout), then loops: parse every complete
 * request in the input buffer, hand it to the export ({@link NbdDispatcher}), send the replies that
 * are ready, and wait for more input. With the in-process {@code local} transport a request runs on
 * this thread while it is handed over (see {@link io.pistore.spi.HostQueue#submitMayCompleteOnCaller});
 * its reply is then kept in a batch that this thread writes with one gathering write once the input
 * buffer holds no further complete request (one write per request at queue depth 1, one per burst
 * when the client pipelines). A reply completed on another thread is written by that thread
 * ({@link ReplyWriter}), so no engine thread ever waits for a slow client.
 *
 * <p>Anything that breaks the protocol ends this connection only.
 */
final class NbdConnection implements Runnable {
    private final NbdServer server;
    private final String peer;
    private final NbdSocket socket;
    /**
     * How the transmission loop waits for input: polls politely, then blocks (loop thread only). When
     * it loses its CPU while polling it polls once more, since the CPU often went to the client,
     * which then has sent its request (a client blocks between requests, it does not poll), and if
     * nothing came it blocks for this wait only.
     */
    private final PolitePoll poll = new PolitePoll(true, 0, true);

    NbdConnection(NbdServer server, SocketChannel ch, String peer) {
        this.server = server;
        this.socket = new NbdSocket(ch);
        this.peer = peer;
    }

    /** The export this connection transmits on: null until its handshake chose one. */
    private volatile String export;

    /** The export this connection transmits on, or null while it negotiates. */
    String export() {
        return export;
    }

    /** How the transmission loop waited for input. */
    PolitePoll waiting() {
        return poll;
    }

    @Override
    public void run() {
        String end = "closed by the client";
        try {
            socket.open();
            NbdHandshake.Negotiated n = new NbdHandshake(server, socket, peer).negotiate();
            if (n != null) {
                export = n.export().name;
                server.log("nbd: " + peer + " export " + n.export().name + " (" + n.export().size + " bytes"
                        + (n.structured() ? ", structured replies" : "") + (socket.isTls() ? ", TLS" : "") + ")");
                ReplyWriter writer = new ReplyWriter(server, socket, peer);
                NbdDispatcher dispatcher = new NbdDispatcher(server, peer, n, socket, writer);
                end = new NbdTransmission(server, socket, writer, dispatcher, poll).run();
                if (socket.isClosed() && end.equals("server stopping")) {
                    end = closedBecause; // the loop saw its socket closed by another thread: say why
                }
            }
        } catch (EOFException e) {
            end = "closed by the client";
        } catch (NbdProtocolException e) {
            end = "protocol error: " + e.getMessage();
        } catch (IOException e) {
            end = socket.isClosed() ? closedBecause : "I/O error: " + e.getMessage();
        } catch (RuntimeException e) {
            end = socket.isClosed() ? closedBecause : "internal error: " + e;
        } finally {
            socket.close();
            server.ended(this);
            server.log("nbd: " + peer + " connection ended: " + end);
            String waits = waitSummary();
            if (!waits.isEmpty()) {
                // internal figures of the polling loop: for whoever tunes --nbd-spin-us, not for every operator
                server.debug("nbd: " + peer + " waited for input: " + waits);
            }
        }
    }

    /** How the connection waited for input, for a debug line at its end (empty when it never polled). */
    private String waitSummary() {
        if (poll.polls() == 0) {
            return "";
        }
        return "polls " + poll.polls() + ", requests caught polling " + poll.caught() + ", blocking waits "
                + poll.blockingWaits() + ", CPU lost while polling " + poll.lostCpu();
    }

    /** Ends the connection from another thread (server shutdown). */
    void shutdown() {
        shutdown("server stopping");
    }

    /** Ends the connection from another thread; its last log line gives {@code why}. */
    void shutdown(String why) {
        closedBecause = why;
        socket.close();
    }

    /** Why another thread closed the socket (read after the socket is closed). */
    private volatile String closedBecause = "server stopping";
}
