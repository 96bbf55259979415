package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One fault under every client at once: hosts ({@link MixedClient}s) and an NBD gateway's real
 * clients ({@link NbdFaultLoad}: fio throughout, nbdcopy right after the fault). Asserts that no
 * request failed, every acknowledged write reads back and nothing stalled beyond the bound.
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
     * the clients run on until each completed more. Returns the figures.
     */
    static String run(Path dir, String what, String uri, List<MixedClient> clients, boolean held, Fault fault,
            long boundMs) throws Exception {
        long seed = what.hashCode();
        assertNull(NbdFaultLoad.copyAndReadBack(uri, dir, seed, false), what + ": nbdcopy before the fault");
        NbdFaultLoad.Fio fio = new NbdFaultLoad.Fio(uri, dir, (int) ((held ? HOLD_MS : 0) / 1000) + 8,
                Integer.toHexString(what.hashCode()));
        NbdFaultLoad.Result f;
        long faultAt;
        String copied;
        try {
            for (MixedClient c : clients) {
                c.start();
            }
            for (MixedClient c : clients) {
                c.awaitMore(30);
            }
            faultAt = System.nanoTime();
            fault.begin();
            CompletableFuture<String> copy = CompletableFuture.supplyAsync(() -> {
                try {
                    return NbdFaultLoad.copyAndReadBack(uri, dir, seed + 1, true);
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
            f = fio.finish();
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
        assertNull(copied, what + ": nbdcopy of an image with holes right after the fault");
        assertTrue(stall <= boundMs, what + ": a host stalled " + stall + " ms (bound " + boundMs + "): " + figures);
        assertTrue(f.longestMillis() <= boundMs, what + ": a fio request stalled beyond " + boundMs + " ms: " + figures);
        return figures.toString();
    }
}
