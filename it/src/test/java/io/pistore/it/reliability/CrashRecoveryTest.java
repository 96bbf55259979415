package io.pistore.it.reliability;

import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash over tcp: {@code pistore serve --transport tcp} on a file volume is killed with SIGKILL
 * under a write load from this JVM (writes of 1 to 4 blocks with PI the host generated, some with
 * FUA, some write-zeroes, and flushes), restarted, every block read back with the target's and the
 * host's own PI checks, then stopped and scrubbed: the {@link KillLoop}. Strict
 * ({@link RecoveryCheck}): no PI error at all, every block exactly one version it may hold — its
 * durable version (acknowledged before a completed flush started, or an acknowledged FUA write) or
 * a later write — and every scrub clean. {@code -Dpistore.crash.points=N} for more kill points
 * (CI: 10).
 */
class CrashRecoveryTest {
    @TempDir
    Path dir;

    @Test
    void acknowledgedWritesSurviveKillNineAndNoBlockIsTorn() throws Exception {
        int points = Figures.intFlag("pistore.crash.points", 10);
        RecoveryCheck c = KillLoop.run(new KillLoop.Frontend() {
            @Override
            public KillLoop.Server start(Path d) throws java.io.IOException, InterruptedException {
                PistoreProcess p = PistoreProcess.serve(List.of(), "--data", d.toString(), "--transport", "tcp",
                        "--listen", "127.0.0.1:0");
                return new KillLoop.Server(p, p.awaitListening());
            }

            @Override
            public CrashHost connect(String address) throws java.io.IOException {
                return new TcpCrashHost(address, KillLoop.VOLUME);
            }
        }, dir, points, 0xC4A5L);
        Figures.record("crash-tcp", c.figures());
        c.assertStrict();
    }

    /** Waits for a request, resubmitting while the queue is full; returns any other completion. */
    static Completion awaitAny(java.util.function.Supplier<CompletableFuture<Completion>> submit) throws Exception {
        return Eventually.until("room in the queue", () -> submit.get().get(30, TimeUnit.SECONDS),
                c -> c.status() != Status.QUEUE_FULL);
    }
}
