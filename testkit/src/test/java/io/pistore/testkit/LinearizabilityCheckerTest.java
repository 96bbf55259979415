package io.pistore.testkit;

import static io.pistore.testkit.LinearizabilityChecker.Op.read;
import static io.pistore.testkit.LinearizabilityChecker.Op.write;
import static io.pistore.testkit.LinearizabilityChecker.UNKNOWN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.LinearizabilityChecker.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The checker fails known non-linearizable histories, passes linearizable ones, and agrees with a brute force. */
class LinearizabilityCheckerTest {
    private static boolean ok(Op... ops) {
        return LinearizabilityChecker.check(List.of(ops)).linearizable();
    }

    @Test
    void aStaleReadAfterAnAcknowledgedWriteFails() {
        assertFalse(ok(write(0, 1, 5, 0, 10), write(0, 1, 6, 20, 30), read(1, 1, 5, 40, 50)));
    }

    @Test
    void aLostWriteFails() {
        // acknowledged, then every later read sees the value before it
        assertFalse(ok(write(0, 1, 5, 0, 10), read(1, 1, 0, 20, 30)));
    }

    @Test
    void aReadOfANeverWrittenValueFails() {
        assertFalse(ok(write(0, 1, 5, 0, 10), read(1, 1, 7, 5, 30)));
    }

    @Test
    void readsThatSeeTwoConcurrentWritesInOppositeOrdersFail() {
        // w5 and w6 overlap; one reader sees 5 then 6, the other, later, 6 then 5: no single order
        assertFalse(ok(write(0, 1, 5, 0, 100), write(1, 1, 6, 0, 100), read(2, 1, 5, 10, 20), read(2, 1, 6, 30, 40),
                read(3, 1, 5, 50, 60)));
    }

    @Test
    void aValueThatFlipsBackWhileItsWriteIsStillRunningFails() {
        // a read saw the new value; a later read, still during the write, saw the old one again
        assertFalse(ok(write(0, 1, 5, 0, 100), read(1, 1, 5, 10, 20), read(1, 1, 0, 30, 40)));
    }

    @Test
    void overlappingOperationsMayTakeEitherOrder() {
        assertTrue(ok(write(0, 1, 5, 0, 100), read(1, 1, 0, 10, 20), read(1, 1, 5, 30, 40)));
        assertTrue(ok(write(0, 1, 5, 0, 100), write(1, 1, 6, 0, 100), read(2, 1, 6, 10, 20), read(2, 1, 5, 30, 40)));
        assertTrue(ok(write(0, 1, 5, 0, 10), read(1, 1, 5, 5, 8))); // a read inside the write may see it
    }

    @Test
    void aWriteWhoseOutcomeIsUnknownMayTakeEffectLateOrNever() {
        assertTrue(ok(write(0, 1, 5, 0, UNKNOWN), read(1, 1, 0, 10, 20), read(1, 1, 5, 30, 40)));
        assertTrue(ok(write(0, 1, 5, 0, UNKNOWN), read(1, 1, 0, 10, 20), read(1, 1, 0, 30, 40)));
        // but not before it was invoked
        assertFalse(ok(read(1, 1, 5, 0, 5), write(0, 1, 5, 10, UNKNOWN)));
    }

    @Test
    void registersAreCheckedApartAndTheAnomalyIsTheShortestFailingPrefix() {
        List<Op> h = new ArrayList<>();
        for (int i = 0; i < 50; i++) { // a long clean history on register 2
            h.add(write(0, 2, i + 1, i * 20, i * 20 + 5));
            h.add(read(1, 2, i + 1, i * 20 + 10, i * 20 + 15));
        }
        h.add(write(0, 3, 9, 0, 10));
        h.add(read(1, 3, 0, 500, 510)); // lost write on register 3
        h.add(write(0, 3, 10, 600, 610));
        h.add(read(1, 3, 10, 700, 710));
        LinearizabilityChecker.Result r = LinearizabilityChecker.check(h);
        assertFalse(r.linearizable());
        assertTrue(r.anomaly().startsWith("register 3: "), r.anomaly());
        assertTrue(r.anomaly().contains("2 operations"), r.anomaly());
        assertEquals(2, r.anomaly().lines().count() - 1, r.anomaly());
    }

    @Test
    void aLongSequentialHistoryOfSeveralClientsPasses() {
        List<Op> h = new ArrayList<>();
        Random rnd = new Random(7);
        long value = 0;
        long t = 0;
        for (int i = 0; i < 5000; i++) {
            if (rnd.nextBoolean()) {
                value = i + 1;
                h.add(write(i % 4, 1, value, t, t + 3));
            } else {
                h.add(read(i % 4, 1, value, t, t + 3));
            }
            t += 2; // each overlaps the next one
        }
        assertTrue(LinearizabilityChecker.check(h).linearizable());
    }

    /** Random small histories: the checker's verdict equals an exhaustive search over every order. */
    @Test
    void agreesWithABruteForceOnRandomSmallHistories() {
        Random rnd = new Random(11);
        int failing = 0;
        for (int trial = 0; trial < 3000; trial++) {
            int n = 1 + rnd.nextInt(6);
            List<Op> h = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                long inv = rnd.nextInt(20);
                long done = rnd.nextInt(8) == 0 ? UNKNOWN : inv + 1 + rnd.nextInt(10);
                long v = rnd.nextInt(3);
                h.add(rnd.nextBoolean() ? write(i, 1, v + 1, inv, done)
                        : read(i, 1, v, inv, done == UNKNOWN ? inv + 5 : done));
            }
            boolean expected = bruteForce(h, new boolean[n], 0, 0, -1);
            assertEquals(expected, LinearizabilityChecker.linearizable(h), h.toString());
            failing += expected ? 0 : 1;
        }
        assertTrue(failing > 300 && failing < 2700, "both verdicts are exercised: " + failing + " failing of 3000");
    }

    /**
     * Whether the operations not in {@code used} can follow those in it, the register holding
     * {@code value}: every order tried; a write whose outcome is unknown may be left out.
     */
    private static boolean bruteForce(List<Op> h, boolean[] used, int placed, long value, int unused) {
        boolean allRequiredPlaced = true;
        for (int i = 0; i < h.size(); i++) {
            if (!used[i] && h.get(i).completed() != UNKNOWN) {
                allRequiredPlaced = false;
            }
        }
        if (allRequiredPlaced) {
            return true;
        }
        for (int i = 0; i < h.size(); i++) {
            if (used[i]) {
                continue;
            }
            Op o = h.get(i);
            boolean canGo = true;
            for (int j = 0; j < h.size(); j++) {
                if (!used[j] && j != i && h.get(j).completed() < o.invoked()) {
                    canGo = false; // another remaining operation completed before this one began
                }
            }
            if (!canGo || (!o.write() && o.value() != value)) {
                continue;
            }
            used[i] = true;
            boolean r = bruteForce(h, used, placed + 1, o.write() ? o.value() : value, unused);
            used[i] = false;
            if (r) {
                return true;
            }
        }
        return false;
    }
}
