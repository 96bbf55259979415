package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.app.cli.Main;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kill loop of the crash tests, the same for every frontend. A 1024-block file volume
 * ({@code 4096+8}, Type 1) is created in {@code DIR}; then, per kill point:
 * <ol>
 *   <li>{@code pistore serve} starts on {@code DIR} (a process of its own); blocks that failed the
 *       last check are rewritten with zeros and flushed;
 *   <li>a {@link CrashLoad} runs for 150 to 750 ms, then the server gets SIGKILL;
 *   <li>a new server starts on {@code DIR} (whatever recovery opening a volume does, it does here)
 *       and every block is read and checked by {@link RecoveryCheck};
 *   <li>that server is stopped with SIGTERM (it flushes and exits), so that no process owns
 *       {@code DIR}, and {@code pistore scrub} runs on the volume in this JVM.
 * </ol>
 * What a block was read as is what the next kill point starts from.
 */
final class KillLoop {
    static final int BLOCKS = 1024;
    static final int WRITERS = 6;
    static final String VOLUME = "v";

    /** How a test reaches the server: how it starts, and the host connections to it. */
    interface Frontend {
        /** Starts {@code pistore serve} on the data directory and waits until it listens; the address. */
        Server start(Path dir) throws IOException, InterruptedException;

        CrashHost connect(String address) throws IOException;
    }

    /** A started server and the address its hosts connect to. */
    record Server(PistoreProcess process, String address) {
    }

    private KillLoop() {
    }

    static RecoveryCheck run(Frontend frontend, Path dir, int points, long seed) throws Exception {
        StringWriter o = new StringWriter();
        try (PrintWriter w = new PrintWriter(o, true)) {
            assertEquals(0, Main.run(w, w, "volume", "create", "--data", dir.toString(), VOLUME,
                    "--size", ((long) BLOCKS * BlockVersions.BS) + "", "--format", "4096+8"), o.toString());
        }
        RecoveryCheck check = new RecoveryCheck();
        SplittableRandom rnd = new SplittableRandom(seed);
        AtomicLong versions = new AtomicLong();
        long[] held = new long[BLOCKS]; // what each block holds (a version, or RecoveryCheck.REPAIR)
        Server server = null;
        try {
            for (int point = 0; point < points; point++) {
                server = frontend.start(dir);
                repair(frontend, server.address(), held);
                WriteHistory history = new WriteHistory(BLOCKS);
                List<CrashHost> hosts = new ArrayList<>();
                try {
                    for (int w = 0; w <= WRITERS; w++) {
                        hosts.add(frontend.connect(server.address()));
                    }
                    CrashLoad load = new CrashLoad(history, hosts.subList(0, WRITERS), hosts.get(WRITERS), BLOCKS,
                            versions, rnd.split());
                    Thread.sleep(150 + rnd.nextInt(600)); // not a synchronisation: the kill point, at random
                    server.process().kill();
                    load.stopAndJoin();
                    check.killed(history, load);
                } finally {
                    for (CrashHost h : hosts) {
                        h.close();
                    }
                }
                server = frontend.start(dir);
                try (CrashHost reader = frontend.connect(server.address())) {
                    for (int lba = 0; lba < BLOCKS; lba++) {
                        held[lba] = check.check(lba, reader.read(lba), history.allowed(lba, held[lba]));
                    }
                }
                check.readBackDone();
                server.process().stop();
                server = null;
                check.scrubbed(scrub(dir));
            }
        } finally {
            if (server != null) {
                server.process().close();
            }
        }
        return check;
    }

    /** {@code pistore scrub --data DIR v} in this JVM: its exit code and output. */
    private static RecoveryCheck.Scrub scrub(Path dir) {
        StringWriter text = new StringWriter();
        int exit;
        try (PrintWriter out = new PrintWriter(text, true)) {
            exit = Main.run(out, out, "scrub", "--data", dir.toString(), VOLUME);
        }
        return new RecoveryCheck.Scrub(exit, text.toString());
    }

    /** Rewrites the blocks that failed their check with zeros, so the next kill point starts from known contents. */
    private static void repair(Frontend frontend, String address, long[] held) throws IOException {
        boolean any = false;
        try (CrashHost h = frontend.connect(address)) {
            for (int lba = 0; lba < held.length; lba++) {
                if (held[lba] == RecoveryCheck.REPAIR) {
                    if (h.write(lba, BlockVersions.content(lba, 0), false) != CrashHost.Ack.DONE) {
                        throw new IOException("rewriting lba " + lba + " failed");
                    }
                    held[lba] = 0;
                    any = true;
                }
            }
            if (any && h.flush() != CrashHost.Ack.DONE) {
                throw new IOException("flush after the rewrites failed");
            }
        }
    }
}
