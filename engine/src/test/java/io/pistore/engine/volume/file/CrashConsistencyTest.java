package io.pistore.engine.volume.file;

import io.pistore.integrity.UnwrittenBlock;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power-loss simulation of a file volume: a workload runs over {@link SimulatedDisk}, then many crash
 * states are built from its recorded writes and syncs (a process crash keeps every write, and maybe
 * part of the one in progress; a power loss keeps any subset of each file's unsynced writes,
 * reordered, torn at 512-byte sectors), each is opened (recovery runs) and checked:
 *
 * <ul>
 *   <li>the volume opens;</li>
 *   <li>its contents are exactly the contents after some prefix of the requests, no shorter than the
 *       last request acknowledged before a completed flush or FUA: so every block is its old or new
 *       version, a multi-block request is all there or not at all, and nothing flushed is lost;</li>
 *   <li>every block's PI verifies (io.pistore.integrity), unwritten blocks hold zeros.</li>
 * </ul>
 *
 * Some states are recovered on a recording disk in turn and crashed again during that recovery; the
 * second recovery must give what an uninterrupted one gives; others take more requests after their
 * recovery and crash again. The checkpoint of a full journal half runs between later requests, at
 * random, as it would on its own thread, so each run is deterministic.
 * {@code -Dpistore.crash.states=N} sets
 * how many crash states each workload samples (default 400).
 */
class CrashConsistencyTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int DS = F.dataSize();
    private static final int MS = F.metadataSize();
    private static final int BLOCKS = 96;
    private static final int APP_TAG = 0x5A;
    private static final int STATES = Integer.getInteger("pistore.crash.states", 400);
    private static final String[] FILES = {"data", "meta", "journal"};

    /**
     * Request mixes; the journal's segment size decides how often checkpoints run and the ring wraps.
     * The write-through ones run on a disk in memory (as tmpfs), where the volume's writers write
     * their blocks home themselves without forcing their records, and every crash is a process
     * crash (some in the middle of a write).
     */
    enum Workload {
        SINGLE_BLOCK_FLUSH(1 << 12, 1, 0, 0.1, 0, 0, 300, false),
        MULTI_BLOCK_FUA(1 << 14, 16, 0, 0.02, 0.15, 0, 200, false),
        ZEROES_SMALL_AND_WHOLE(1 << 13, 8, 0.25, 0.1, 0.05, 0, 200, false),
        TINY_JOURNAL_CHECKPOINTS(3000, 4, 0.1, 0.1, 0.05, 0, 300, false),
        REOPEN_BETWEEN(1 << 13, 8, 0.1, 0.1, 0.05, 0.03, 250, false),
        /**
         * Segments barely larger than a record, so the volume's size asks for the largest ring (32
         * segments, 16 gathered per writing home): the ring wraps a dozen times, with writers
         * waiting for ring space and checkpoints writing many segments home in LBA order.
         */
        LARGE_RING_WRAPS(1200, 2, 0.1, 0.05, 0.02, 0.01, 600, false),
        /**
         * Writes of up to 80 of the 96 blocks: those of 64 or more hold every block lock, and the
         * journal moves on under them when their segment is full (a record or so per segment).
         */
        LARGE_WRITES(1 << 16, 80, 0.05, 0.05, 0.05, 0.02, 200, false),
        WRITE_THROUGH_MIXED(3000, 4, 0.15, 0.05, 0.05, 0.02, 300, true),
        WRITE_THROUGH_LARGE(1 << 16, 80, 0.05, 0.05, 0, 0.02, 150, true),
        WRITE_THROUGH_MULTI_BLOCK(1 << 14, 16, 0.05, 0.02, 0, 0, 200, true);

        final long journalSegment;
        final int maxBlocks;
        final double zeroes;
        final double flush;
        final double fua;
        final double reopen;
        final int requests;
        final boolean inMemory;

        /**
         * Zeroings of this many blocks or more are checkpointed whole: all those of 64 or more in
         * {@link #ZEROES_SMALL_AND_WHOLE}; elsewhere the default, so they are indexed like writes.
         */
        int checkpointedZeroing() {
            return this == ZEROES_SMALL_AND_WHOLE ? 64 : FileVolume.CHECKPOINTED_ZEROING;
        }

        Workload(long journalSegment, int maxBlocks, double zeroes, double flush, double fua, double reopen,
                 int requests, boolean inMemory) {
            this.inMemory = inMemory;
            this.journalSegment = journalSegment;
            this.maxBlocks = maxBlocks;
            this.zeroes = zeroes;
            this.flush = flush;
            this.fua = fua;
            this.reopen = reopen;
            this.requests = requests;
        }
    }

    /** A workload's record: the model's contents after each prefix of requests and the op indexes. */
    private static final class Run {
        SimulatedDisk disk = new SimulatedDisk();
        final List<byte[]> states = new ArrayList<>(); // states.get(r): data then metadata after r requests
        final List<Integer> startOps = new ArrayList<>(); // op index where request r (0-based) began
        final List<int[]> flushPoints = new ArrayList<>(); // {op index when it completed, requests covered}
        int firstOp;
        long capacity;
        /** Checkpoints of full halves, run when the workload decides: between later requests, as on a thread. */
        final java.util.ArrayDeque<Runnable> checkpoints = new java.util.ArrayDeque<>();

        void runCheckpoints() {
            while (!checkpoints.isEmpty()) {
                checkpoints.poll().run();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Workload.class)
    void everyCrashStateOpensWithAPrefixOfTheRequestsAndValidPi(Workload w) throws IOException {
        Random r = new Random(w.ordinal() * 7919L + 17);
        Run run = record(w, r);
        int recoveredRecords = 0;
        int checked = 0;
        int duringRecovery = 0;
        int afterRecovery = 0;
        for (int s = 0; s < STATES; s++) {
            int k = run.firstOp + r.nextInt(run.disk.opCount() - run.firstOp + 1);
            boolean processCrash = r.nextInt(4) == 0 || w.inMemory; // tmpfs: a power loss leaves nothing
            Map<String, byte[]> state = run.disk.crashState(k, processCrash, r);
            String what = w + " crash at op " + k + (processCrash ? " (process)" : " (power)") + ", state " + s;
            if (s % 8 == 0) {
                duringRecovery += crashDuringRecovery(run, state, k, r, what);
            }
            if (s % 8 == 4) {
                afterRecovery += crashAfterRecovery(run, w, state, k, r, what);
            }
            List<String> notes = new ArrayList<>();
            byte[] got = readAll(openOn(run.disk.like(state), run.capacity, notes));
            check(run, k, got, what);
            checked++;
            recoveredRecords += recordsIn(notes);
        }
        System.out.printf("%s: %d crash states checked, %d more crashed during their recovery, %d more crashed after"
                + " further requests; %d journal records replayed in all%n", w, checked, duringRecovery, afterRecovery,
                recoveredRecords);
        assertTrue(recoveredRecords > 0, "some crash states had journal records to replay");
    }

    @Test
    void theCheckRejectsABlockWhoseDataDoesNotMatchItsPi() throws IOException {
        Random r = new Random(5);
        Run run = record(Workload.SINGLE_BLOCK_FLUSH, r);
        int k = run.disk.opCount();
        byte[] got = readAll(openOn(new SimulatedDisk(run.disk.crashState(k, true, r)), run.capacity, new ArrayList<>()));
        check(run, k, got, "intact");
        int lba = 0;
        while (isUnwritten(got, lba)) {
            lba++;
        }
        got[lba * DS] ^= 1; // what an old-format crash between the data and metadata writes left behind
        byte[] torn = got;
        assertThrows(AssertionError.class, () -> check(run, k, torn, "torn"));
    }

    /**
     * Two unflushed records, the first torn: recovery keeps neither. The next record after recovery
     * lands where the torn one was and, being the same size, puts the old second record right where
     * its successor would go, with the sequence number expected there; the epoch keeps it out.
     */
    @Test
    void aRecordDroppedByRecoveryIsNeverReplayedLater() throws IOException {
        SimulatedDisk disk = new SimulatedDisk();
        FileVolume v = FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, 1 << 16, Runnable::run);
        byte[][] a = written(1);
        byte[][] b = written(2);
        v.write(1, 1, ScatterList.wrap(a[0]), ScatterList.wrap(a[1]), false);
        v.write(2, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), false);
        Map<String, byte[]> crashed = disk.contents();
        crashed.get("journal")[Journal.RECORDS_START + Journal.RECORD_HEADER + 10] ^= 1; // the first record torn

        SimulatedDisk second = new SimulatedDisk(crashed);
        List<String> notes = new ArrayList<>();
        FileVolume recovered = openOn(second, 1 << 16, notes);
        assertTrue(notes.get(0).startsWith("v: recovered 0 journal records"), notes.toString());
        byte[][] c = written(3);
        recovered.write(3, 1, ScatterList.wrap(c[0]), ScatterList.wrap(c[1]), false);
        recovered.flush();

        byte[] got = readAll(openOn(new SimulatedDisk(second.contents()), 1 << 16, new ArrayList<>()));
        assertArrayEquals(c[0], Arrays.copyOfRange(got, 3 * DS, 4 * DS), "the record written after recovery");
        assertTrue(isUnwritten(got, 2), "the record recovery dropped stays dropped");
        assertTrue(isUnwritten(got, 1));
    }

    /** One block of random data with its PI, for block {@code lba}. */
    private static byte[][] written(int lba) {
        byte[] d = new byte[DS];
        byte[] m = new byte[MS];
        new Random(lba).nextBytes(d);
        Pi.generate(PiContext.builder(F).initialRefTag(lba).appTag(APP_TAG).build(), ScatterList.wrap(d),
                ScatterList.wrap(m), 1);
        return new byte[][] {d, m};
    }

    /** Runs the workload on a recording disk, keeping the model state after every request. */
    private static Run record(Workload w, Random r) throws IOException {
        Run run = new Run();
        run.disk = new SimulatedDisk(w.inMemory);
        run.capacity = w.journalSegment;
        FileVolume v = FileVolume.create(run.disk.open("data"), run.disk.open("meta"), run.disk.open("journal"), "v",
                F, BLOCKS, 1 << 20, w.journalSegment, run.checkpoints::add);
        byte[] model = new byte[BLOCKS * (DS + MS)];
        byte[] unwritten = UnwrittenBlock.metadata(F);
        for (int b = 0; b < BLOCKS; b++) {
            System.arraycopy(unwritten, 0, model, BLOCKS * DS + b * MS, MS);
        }
        run.firstOp = run.disk.opCount();
        continueRun(run, v, w, r, model, w.requests);
        return run;
    }

    /** Runs {@code requests} requests of the workload on {@code v}, whose contents are {@code model}. */
    private static void continueRun(Run run, FileVolume v, Workload w, Random r, byte[] model, int requests)
            throws IOException {
        byte[] unwritten = UnwrittenBlock.metadata(F);
        run.states.add(model.clone());
        v.checkpointZeroingsFrom(w.checkpointedZeroing());
        for (int i = 0; i < requests; i++) {
            double dice = r.nextDouble();
            if (dice < w.reopen) {
                v.close();
                v = openOn(run.disk, w.journalSegment, new ArrayList<>(), run.checkpoints::add);
                v.checkpointZeroingsFrom(w.checkpointedZeroing());
                continue;
            }
            if (dice < w.reopen + 0.03) {
                v.checkpointActiveSegment(); // what an idle volume does on its own
                continue;
            }
            if (dice < w.reopen + 0.03 + w.flush) {
                v.flush();
                run.flushPoints.add(new int[] {run.disk.opCount(), run.states.size() - 1});
                continue;
            }
            boolean fua = r.nextDouble() < w.fua;
            boolean zero = r.nextDouble() < w.zeroes;
            int n = 1 + r.nextInt(w.maxBlocks);
            if (zero && r.nextInt(5) == 0) {
                n = 64 + r.nextInt(BLOCKS - 64 + 1); // a zeroing that holds every block lock
            }
            int lba = r.nextInt(BLOCKS - n + 1);
            run.startOps.add(run.disk.opCount());
            if (zero) {
                v.writeZeroes(lba, n, fua);
                for (int b = lba; b < lba + n; b++) {
                    Arrays.fill(model, b * DS, (b + 1) * DS, (byte) 0);
                    System.arraycopy(unwritten, 0, model, BLOCKS * DS + b * MS, MS);
                }
            } else {
                byte[] d = new byte[n * DS];
                byte[] m = new byte[n * MS];
                r.nextBytes(d);
                PiContext ctx = PiContext.builder(F).initialRefTag(lba).appTag(APP_TAG).build();
                Pi.generate(ctx, ScatterList.wrap(d), ScatterList.wrap(m), n);
                v.write(lba, n, ScatterList.wrap(d), ScatterList.wrap(m), fua);
                System.arraycopy(d, 0, model, lba * DS, d.length);
                System.arraycopy(m, 0, model, BLOCKS * DS + lba * MS, m.length);
            }
            run.states.add(model.clone());
            if (r.nextInt(4) == 0) {
                run.runCheckpoints();
            }
            if (fua) {
                run.flushPoints.add(new int[] {run.disk.opCount(), run.states.size() - 1});
            }
        }
        v.close();
    }

    /**
     * Recovers {@code state}, runs more requests on it and crashes those: records left over from
     * before the first crash (written after what it kept) must never be replayed as new ones. Returns
     * how many crash states it checked.
     */
    private static int crashAfterRecovery(Run run, Workload w, Map<String, byte[]> state, int k, Random r, String what)
            throws IOException {
        SimulatedDisk disk = run.disk.like(state);
        Run more = new Run();
        FileVolume v = openOn(disk, run.capacity, new ArrayList<>(), more.checkpoints::add);
        int prefix = check(run, k, readAll(v), what);
        more.disk = disk;
        more.capacity = run.capacity;
        more.firstOp = disk.opCount();
        continueRun(more, v, w, r, run.states.get(prefix).clone(), 30);
        int n = 0;
        for (int i = 0; i < 4; i++) {
            int k2 = more.firstOp + r.nextInt(disk.opCount() - more.firstOp + 1);
            Map<String, byte[]> again = disk.crashState(k2, r.nextInt(4) == 0, r);
            check(more, k2, readAll(openOn(disk.like(again), run.capacity, new ArrayList<>())),
                    what + ", then crashed again at op " + k2);
            n++;
        }
        return n;
    }

    /**
     * Recovers {@code state} on a recording disk, then crashes that recovery at a few points: each
     * second recovery must read the same as the uninterrupted one. Returns how many it checked.
     */
    private static int crashDuringRecovery(Run run, Map<String, byte[]> state, int k, Random r, String what)
            throws IOException {
        SimulatedDisk disk = run.disk.like(state);
        FileVolume first = openOn(disk, run.capacity, new ArrayList<>());
        byte[] expected = readAll(first);
        check(run, k, expected, what + ", uninterrupted recovery");
        int n = 0;
        for (int i = 0; i < 4; i++) {
            int k2 = r.nextInt(disk.opCount() + 1);
            Map<String, byte[]> again = disk.crashState(k2, r.nextInt(4) == 0, r);
            byte[] got = readAll(openOn(disk.like(again), run.capacity, new ArrayList<>()));
            assertArrayEquals(expected, got, what + ", recovery crashed at its op " + k2);
            n++;
        }
        return n;
    }

    private static FileVolume openOn(SimulatedDisk disk, long capacity, List<String> notes) throws IOException {
        return openOn(disk, capacity, notes, Runnable::run);
    }

    private static FileVolume openOn(SimulatedDisk disk, long capacity, List<String> notes,
                                     java.util.concurrent.Executor checkpoints) throws IOException {
        return FileVolume.open(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS, 1 << 20,
                capacity, checkpoints, notes::add);
    }

    private static byte[] readAll(FileVolume v) throws IOException {
        byte[] d = new byte[BLOCKS * DS];
        byte[] m = new byte[BLOCKS * MS];
        v.read(0, BLOCKS, ScatterList.wrap(d), ScatterList.wrap(m));
        byte[] all = Arrays.copyOf(d, d.length + m.length);
        System.arraycopy(m, 0, all, d.length, m.length);
        return all;
    }

    /** The invariants of the class comment for a volume that read {@code got} after a crash at op {@code k}. */
    private static int check(Run run, int k, byte[] got, String what) {
        for (int b = 0; b < BLOCKS; b++) {
            ScatterList d = ScatterList.wrap(Arrays.copyOfRange(got, b * DS, (b + 1) * DS));
            ScatterList m = ScatterList.wrap(Arrays.copyOfRange(got, BLOCKS * DS + b * MS, BLOCKS * DS + (b + 1) * MS));
            if (isUnwritten(got, b)) {
                if (UnwrittenBlock.firstDataError(F, d, m, 1) != null) {
                    fail(what + ": block " + b + " has the unwritten pattern over non-zero data");
                }
            } else {
                PiError e = Pi.verify(PiContext.builder(F).initialRefTag(b).appTag(APP_TAG).build(), d, m, 1);
                if (e != null) {
                    fail(what + ": block " + b + " fails its PI check: " + e);
                }
            }
        }
        int floor = 0;
        for (int[] fp : run.flushPoints) {
            if (fp[0] <= k) {
                floor = Math.max(floor, fp[1]);
            }
        }
        // Requests begun by op k: a process crash may leave op k (in progress) there whole.
        int started = 0;
        while (started < run.startOps.size() && run.startOps.get(started) <= k) {
            started++;
        }
        for (int prefix = floor; prefix <= started; prefix++) {
            if (Arrays.equals(run.states.get(prefix), got)) {
                return prefix;
            }
        }
        return fail(what + ": contents match no prefix of " + floor + " to " + started + " requests");
    }

    private static boolean isUnwritten(byte[] all, int b) {
        return UnwrittenBlock.isUnwritten(F, UnwrittenBlock.metadata(F), all, BLOCKS * DS + b * MS);
    }

    private static int recordsIn(List<String> notes) {
        int n = 0;
        for (String s : notes) {
            java.util.regex.Matcher mt = java.util.regex.Pattern.compile("recovered (\\d+) journal records").matcher(s);
            if (mt.find()) {
                n += Integer.parseInt(mt.group(1));
            }
        }
        return n;
    }
}
