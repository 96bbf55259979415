package io.pistore.spi;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which peer of a target's list a host connects to: the connect rule every host transport shares,
 * with opening, checking and closing one peer left to the transport ({@link Peers}).
 *
 * <p>Peers are tried in order and the first that opens is chosen. With a list of more than one peer
 * and a volume named ({@link ConnectOptions#volume()}), a peer that opens but does not list that
 * volume is passed over for the next one that does, and the choice logs one line naming those passed
 * over ({@code pistore tcp: connected to B, passing over A: no volume v there}). When no peer lists
 * it, the first of them that opened is chosen, as without a name (the application then finds the
 * volume missing there); it is kept open until then, and the later ones are closed at once.
 *
 * <p>Failures: with one address, its failure throws at once ({@code cannot connect to tcp target A:
 * reason}); with a list, each is noted and the next peer tried, and when none opens one line names
 * what each said ({@code cannot connect to any peer of tcp target A,B: A: reason; B: reason}). An
 * interrupted open stops the choice at once (the thread's interrupt flag set again), closing the peer
 * kept as the fallback: the caller asked to stop, not to try the rest of the list.
 */
public final class PeerChoice {
    private PeerChoice() {
    }

    /**
     * What a transport does with one peer.
     *
     * @param <P> the transport's opened peer (e.g. its queues to that peer, greeted)
     */
    public interface Peers<P> {
        /**
         * Opens peer {@code index} of the list. On failure it closes what it opened and throws with
         * the reason as message (the message goes into the line naming what each peer said).
         */
        P open(int index) throws IOException, InterruptedException;

        /** Whether the opened peer lists volume {@code volume}. */
        boolean lists(P opened, String volume);

        /** Closes an opened peer that was not chosen. */
        void close(P opened);
    }

    /** The peer chosen: its index in the list and what {@link Peers#open} returned for it. */
    public record Chosen<P>(int index, P opened) {
    }

    /**
     * Chooses a peer of {@code peers} as described above.
     *
     * @param transport the transport's name in messages and the log line ({@code tcp}, {@code rdma})
     * @param log where the line naming the peers passed over goes (INFO)
     * @param target the target as the host gave it (one address or the list), for messages
     * @param peers the peers as named in messages, in the order to try them
     * @param volume the volume the host will use, or null; ignored with one peer
     * @throws IOException when no peer opens (one line), or {@link InterruptedIOException} when interrupted
     */
    public static <P> Chosen<P> choose(String transport, System.Logger log, String target, List<String> peers,
                                       String volume, Peers<P> ops) throws IOException {
        boolean single = peers.size() == 1;
        String wanted = single ? null : volume;
        StringBuilder failures = new StringBuilder();
        List<String> without = new ArrayList<>();
        P fallback = null; // the first peer that opened without the wanted volume
        int fallbackIndex = -1;
        for (int p = 0; p < peers.size(); p++) {
            P opened;
            try {
                // an open that needs no blocking call would not notice a pending interrupt
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                opened = ops.open(p);
            } catch (InterruptedException e) {
                if (fallback != null) {
                    ops.close(fallback);
                }
                Thread.currentThread().interrupt();
                InterruptedIOException x = new InterruptedIOException(
                        "cannot connect to " + transport + " target " + target + ": interrupted");
                x.initCause(e);
                throw x;
            } catch (IOException e) {
                if (single) {
                    throw new IOException("cannot connect to " + transport + " target " + target + ": "
                            + e.getMessage(), e);
                }
                failures.append(failures.length() == 0 ? "" : "; ").append(peers.get(p)).append(": ")
                        .append(e.getMessage());
                continue;
            }
            if (wanted != null && !ops.lists(opened, wanted)) {
                without.add(peers.get(p));
                if (fallback == null) {
                    fallback = opened;
                    fallbackIndex = p;
                } else {
                    ops.close(opened);
                }
                continue;
            }
            if (fallback != null) {
                ops.close(fallback);
            }
            if (!without.isEmpty()) {
                log.log(System.Logger.Level.INFO, "pistore " + transport + ": connected to " + peers.get(p)
                        + ", passing over " + String.join(", ", without) + ": no volume " + wanted + " there");
            }
            return new Chosen<>(p, opened);
        }
        if (fallback != null) {
            return new Chosen<>(fallbackIndex, fallback); // no peer lists it: as without a name
        }
        throw new IOException("cannot connect to any peer of " + transport + " target " + target + ": " + failures);
    }
}
