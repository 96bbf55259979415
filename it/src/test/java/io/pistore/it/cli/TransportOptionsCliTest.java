package io.pistore.it.cli;

import io.pistore.app.cli.Main;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Transport settings on the command line and in a config file: checked, one-line errors, flags win. */
class TransportOptionsCliTest {
    @TempDir
    Path dir;

    record Result(int code, String out, String err) {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(code, out.toString(), err.toString());
    }

    private static void assertUsage(String expected, Result r) {
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().strip().matches("pistore( \\w+)?: .*"), r.err());
        assertEquals(expected, r.err().strip().substring(r.err().indexOf(": ") + 2), "one line with the reason");
    }

    @Test
    void badSettingsStopTheCommandWithOneLine() {
        assertUsage("unknown option 'tcp.iothreads' of transport tcp; it takes: tcp.ioThreads, tcp.spinMicros,"
                + " tcp.pollMicros, tcp.spinYield, tcp.headerDigest, tcp.dataDigest, tcp.maxTransfer,"
                + " tcp.requestTimeoutMs, tcp.connectTimeoutMs, tcp.frameTimeoutMs, tcp.reconnect, tcp.reconnectDelayMs,"
                + " tcp.reconnectMaxDelayMs, tcp.pathStates, tcp.flushFrames, tcp.tls, tcp.tlsCert, tcp.tlsKey, tcp.tlsCa,"
                + " tcp.tlsVerifyClient, tcp.tlsPsk, tcp.tlsPskIdentity, tcp.tlsEngine, tcp.access",
                run("bench", "--transport", "tcp", "--seconds", "1", "--transport-option", "tcp.iothreads=4"));
        assertUsage("tcp.ioThreads must be 0 to 256, not -1",
                run("bench", "--transport", "tcp", "--transport-option", "tcp.ioThreads=-1"));
        assertUsage("rdma.pi must be auto, offload or cpu, not 'gpu'",
                run("bench", "--transport", "local", "--transport-option", "rdma.pi=gpu"));
        Result nvme = run("serve", "--memory-volume", "m:1MiB", "--transport-option", "nvme.qd=4");
        assertEquals(2, nvme.code(), nvme.out() + nvme.err());
        assertTrue(nvme.err().strip().matches("pistore serve: option 'nvme.qd' names no transport on the class path"
                + " \\(transports: [a-z, ]*local, rdma, tcp\\)"), nvme.err());
        assertUsage("expected a transport option as NAME=VALUE, e.g. tcp.ioThreads=4, not 'tcp.ioThreads'",
                run("transports", "--transport-option", "tcp.ioThreads"));
    }

    @Test
    void theConfigFileGivesSettingsAndTheCommandLineWins() throws Exception {
        Path cfg = dir.resolve("pistore.properties");
        Files.writeString(cfg, "transport=tcp\nseconds=1\nramp=0\nsize=16m\nqd=2\ntcp.ioThreads=999\n");
        assertUsage("tcp.ioThreads must be 0 to 256, not 999", run("bench", "--config", cfg.toString()));
        Result flagWins = run("bench", "--config", cfg.toString(), "--transport-option", "tcp.ioThreads=1",
                "--transport-option", "tcp.dataDigest=true");
        assertEquals(0, flagWins.code(), flagWins.err());
        assertTrue(flagWins.out().contains("tcp") && flagWins.out().contains("qd=2"), flagWins.out());
        Result listed = run("transports", "--config", cfg.toString(), "--transport-option", "tcp.ioThreads=1");
        assertTrue(listed.out().contains("tcp.ioThreads = 1 (given)"), listed.out());
    }

    @Test
    void settingsChooseTheRdmaPathAndAnUnusableProviderSaysWhy() {
        Result disni = run("bench", "--transport", "rdma", "--seconds", "1", "--transport-option", "rdma.provider=disni");
        assertEquals(2, disni.code(), disni.out() + disni.err());
        assertTrue(disni.err().startsWith("pistore bench: transport 'rdma' is unavailable: verbs provider disni: "),
                disni.err());
        assertEquals(1, disni.err().strip().lines().count(), disni.err());
        Result all = run("bench", "--transport", "all", "--seconds", "1", "--ramp", "0", "--size", "8m", "--json",
                "--transport-option", "rdma.provider=disni");
        assertTrue(all.out().contains("\"transport\":\"rdma\"") && all.out().contains("unavailable"), all.out());
    }
}
