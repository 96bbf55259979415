package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One fault under every client at once: hosts ({@link MixedClient}s, whose first requests after the
 * fault read each of their blocks) and an NBD gateway's real clients ({@link NbdFaultLoad}: fio
 * throughout; nbdcopy right after the fault, reading back the image it wrote before it, then writing
 * an image with holes and reading it back). Asserts that no request failed, every acknowledged write
 * reads back and nothing stalled beyond the bound.
 */
final class FaultRound {
    /** How long a held fault (a frozen peer, a cut link) lasts. */
    static final long HOLD_MS = 5000;

    /** A fault: {@link #begin} makes it; {@link #end} ends a held one (after {@link #HOLD_MS}). */
    interface Fault {
        void begin() throws Exception;

        void end() throws Exception;
    }

    private FaultRound() {
    }

    /**
     * Runs {@code clients} and fio and nbdcopy through the gateway at {@code uri}; once each host has
     * completed requests, {@code fault} begins (and, when {@code held}, ends {@link #HOLD_MS} later);
     * the clients run on until each completed more and nbdcopy has written and read back after the
     * fault; fio runs until then (it is stopped, so it spans the whole round however long the fault's
     * stall lasts). Returns the figures.
     */
    static String run(Path dir, String what, String uri, List<MixedClient> clients, boolean held, Fault fault,
            long boundMs) throws Exception {
        long seed = what.hashCode();
        assertNull(NbdFaultLoad.copyAndReadBack(uri, dir, seed, false), what + ": nbdcopy before the fault");
        NbdFaultLoad.Result f;
        long faultAt;
        String copied;
        try (NbdFaultLoad.Fio fio = new NbdFaultLoad.Fio(uri, dir, Integer.toHexString(what.hashCode()))) {
            for (MixedClient c : clients) {
                c.start();
            }
            for (MixedClient c : clients) {
                c.awaitMore(30);
            }
            for (MixedClient c : clients) {
                c.readEveryBlockNext();
            }
            faultAt = System.nanoTime();
            fault.begin();
            CompletableFuture<String> copy = CompletableFuture.supplyAsync(() -> {
                try {
                    String read = NbdFaultLoad.readBack(uri, dir, seed);
                    return read != null ? "read right after the fault: " + read
                            : NbdFaultLoad.copyAndReadBack(uri, dir, seed + 1, true);
                } catch (Exception e) {
                    return e.toString();
                }
            });
            if (held) {
                Thread.sleep(HOLD_MS); // the fault's length, not a synchronisation
                fault.end();
            }
            for (MixedClient c : clients) {
                c.awaitMore(30);
            }
            copied = copy.get(180, TimeUnit.SECONDS);
            f = fio.stop();
        } finally {
            for (MixedClient c : clients) {
                c.stopAndVerify();
            }
        }
        StringBuilder figures = new StringBuilder(what + ":");
        long stall = 0;
        for (MixedClient c : clients) {
            long s = c.stallMillisAfter(faultAt);
            figures.append(' ').append(c.name).append(' ').append(c.counts()).append(", longest ").append(s)
                    .append(" ms after the fault;");
            stall = Math.max(stall, s);
            assertEquals(List.of(), c.errors, what);
        }
        figures.append(' ').append(f);
        System.out.println("peer fault: " + figures);
        assertNull(copied, what + ": nbdcopy reading the image written before the fault right after it, then "
                + "writing an image with holes and reading it back");
        assertTrue(stall <= boundMs, what + ": a host stalled " + stall + " ms (bound " + boundMs + "): " + figures);
        assertTrue(f.longestMillis() <= boundMs, what + ": a fio request stalled beyond " + boundMs + " ms: " + figures);
        return figures.toString();
    }
}
