package io.pistore.it.reliability;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash over NBD: {@code pistore serve --nbd} on a file volume is killed with SIGKILL under a write
 * load from NBD clients in this JVM ({@link NbdCrashHost}: NBD_CMD_WRITE with and without FUA,
 * NBD_CMD_WRITE_ZEROES, NBD_CMD_FLUSH on connections of their own), restarted, every block read
 * back with NBD_CMD_READ, then stopped and scrubbed: the {@link KillLoop}. Strict
 * ({@link RecoveryCheck}): no read fails (the server answers a PI failure with EIO), every block is
 * exactly one version it may hold, every scrub is clean. {@code -Dpistore.crash.points=N} for more
 * kill points (CI: 10).
 */
class NbdCrashRecoveryTest {
    @TempDir
    Path dir;

    @Test
    void acknowledgedNbdWritesSurviveKillNineAndNoBlockIsTorn() throws Exception {
        int points = Figures.intFlag("pistore.crash.points", 10);
        RecoveryCheck c = KillLoop.run(new KillLoop.Frontend() {
            @Override
            public KillLoop.Server start(Path d) throws java.io.IOException, InterruptedException {
                PistoreProcess p = PistoreProcess.serve(List.of(), "--data", d.toString(), "--nbd", "127.0.0.1:0");
                return new KillLoop.Server(p, p.awaitNbdListening());
            }

            @Override
            public CrashHost connect(String address) throws java.io.IOException {
                NbdCrashHost h = new NbdCrashHost(address, KillLoop.VOLUME);
                if (h.size() != (long) KillLoop.BLOCKS * BlockVersions.BS) {
                    h.close();
                    throw new java.io.IOException("export " + KillLoop.VOLUME + " has " + h.size() + " bytes");
                }
                return h;
            }
        }, dir, points, 0x4EBDC4A5L);
        Figures.record("crash-nbd", c.figures());
        c.assertStrict();
    }
}
