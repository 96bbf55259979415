package io.pistore.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Test JVMs running side by side pick from parts of the range that do not overlap. */
class FreePortsTest {
    @Test
    void eachForkOfAModuleHasAQuarterOfItsOwn() {
        Set<Integer> seen = new HashSet<>();
        for (int fork = 1; fork <= 4; fork++) {
            int[] r = FreePorts.range(Integer.toString(fork));
            assertTrue(r[0] >= 20_000 && r[1] <= 32_768 && r[1] - r[0] >= 3000, fork + ": " + r[0] + "-" + r[1]);
            for (int p = r[0]; p < r[1]; p++) {
                assertTrue(seen.add(p), "port " + p + " in two forks' parts");
            }
        }
        assertArrayEquals(FreePorts.range("1"), FreePorts.range("5"), "a fifth fork shares the first's part");
        assertArrayEquals(new int[] {20_000, 32_768}, FreePorts.range(null), "no fork number: the whole range");
        assertArrayEquals(new int[] {20_000, 32_768}, FreePorts.range("${surefire.forkNumber}"));
        assertArrayEquals(new int[] {20_000, 32_768}, FreePorts.range("0"));
    }

    @Test
    void portsComeFromThisJvmsPartAndAreNeverGivenTwice() {
        int[] r = FreePorts.range(System.getProperty("pistore.test.fork"));
        assertNotEquals(null, System.getProperty("pistore.test.fork"), "surefire names the fork");
        Set<Integer> given = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int p = FreePorts.next();
            assertTrue(p >= r[0] && p < r[1], p + " outside " + r[0] + "-" + r[1]);
            assertTrue(given.add(p), "given twice: " + p);
        }
        assertEquals(50, given.size());
    }
}
