package io.pistore.it.reliability;

import io.pistore.it.CtrlC;
import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.app.cli.Main;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve} says when it is ready: {@code --daemon} returns only once the server in the
 * background listens (a connect right after it succeeds, with no wait), {@code --pid-file} names
 * it and {@code stop} ends it, a server that cannot start makes {@code --daemon} fail with its
 * error and code, systemd hears {@code READY=1} on {@code NOTIFY_SOCKET}, and a SIGTERM stop exits 0.
 */
@Timeout(180)
class ServeReadinessTest {
    private static final Pattern BACKGROUND = Pattern.compile(
            "pistore serve: running in the background, pid (\\d+), log (\\S+)");
    private static final Pattern LISTENING = Pattern.compile("(?m)^pistore serve: .* on tcp 127\\.0\\.0\\.1:(\\d+)$");

    @TempDir
    Path dir;

    record Ran(int code, String out, String err) {
    }

    private Ran cli(List<String> env, String... args) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(PistoreProcess.command(List.of(), args));
        for (String e : env) {
            pb.environment().put(e.substring(0, e.indexOf('=')), e.substring(e.indexOf('=') + 1));
        }
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "pistore " + String.join(" ", args) + " did not return");
        return new Ran(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private Path volumes() {
        Path data = dir.resolve("data");
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", data.toString(), "v1",
                "--size", "1MiB");
        assertEquals(0, code, o.toString());
        return data;
    }

    @Test
    void daemonReturnsOnceServingAndStopEndsIt() throws Exception {
        Path data = volumes();
        Path pidFile = dir.resolve("serve.pid");
        Ran r = cli(List.of(), "serve", "--daemon", "--data", data.toString(), "--listen", "127.0.0.1:0",
                "--pid-file", pidFile.toString());
        assertEquals(0, r.code(), r.err());
        Matcher m = BACKGROUND.matcher(r.out().strip());
        assertTrue(m.matches(), r.out());
        long pid = Long.parseLong(m.group(1));
        assertEquals(data.resolve("serve.log").toString(), m.group(2));
        assertEquals(Long.toString(pid), Files.readString(pidFile).strip());
        assertTrue(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        String log = Files.readString(data.resolve("serve.log"));
        Matcher port = LISTENING.matcher(log);
        assertTrue(port.find(), log);
        try (Socket s = new Socket("127.0.0.1", Integer.parseInt(port.group(1)))) {
            assertTrue(s.isConnected()); // no wait: --daemon returned after the listener was up
        }
        Ran stop = cli(List.of(), "stop", "--pid-file", pidFile.toString());
        assertEquals(0, stop.code(), stop.err());
        assertEquals("pistore stop: stopped pid " + pid, stop.out().strip());
        // exited: gone, or a zombie until init reaps the daemon
        assertTrue(io.pistore.app.cli.serve.StopCommand.exited(pid), "stop returned before serve exited");
        assertFalse(Files.exists(pidFile), "a clean stop removes the pid file");
        assertTrue(Files.readString(data.resolve("serve.log")).contains("pistore serve: stopped"));
        Ran again = cli(List.of(), "stop", "--pid-file", pidFile.toString());
        assertEquals(2, again.code(), again.out() + again.err());
        assertTrue(again.err().contains("no such file"), again.err());
    }

    @Test
    void daemonThatCannotStartSaysWhyWithItsCode() throws Exception {
        Path data = volumes();
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Path pidFile = dir.resolve("serve.pid");
            Ran r = cli(List.of(), "serve", "--daemon", "--data", data.toString(), "--listen",
                    "127.0.0.1:" + taken.getLocalPort(), "--pid-file", pidFile.toString());
            assertEquals(2, r.code(), r.out() + r.err());
            assertTrue(r.err().strip().startsWith("pistore serve: cannot listen on 127.0.0.1:" + taken.getLocalPort()),
                    r.err());
            assertEquals("", r.out());
            assertFalse(Files.exists(pidFile));
        }
    }

    @Test
    void notifySocketHearsReadyAndSigtermStopsWithZero() throws Exception {
        assumeTrue(onPath("python3") && onPath("systemd-notify"), "python3 or systemd-notify is not installed");
        Path data = volumes();
        Path sock = dir.resolve("notify.sock");
        Process listener = new ProcessBuilder("python3", "-c", String.join("\n",
                "import socket, sys",
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
                "s.bind(sys.argv[1])",
                "print('bound', flush=True)",
                "s.settimeout(120)",
                "print(s.recv(4096).decode().replace('\\n', ' '), flush=True)"), sock.toString())
                .redirectErrorStream(true).start();
        try {
            var lines = listener.inputReader(StandardCharsets.UTF_8);
            assertEquals("bound", lines.readLine());
            // a bare port listens on 127.0.0.1, as for --nbd and --metrics
            List<String> cmd = new ArrayList<>(PistoreProcess.command(List.of(), "serve", "--data", data.toString(),
                    "--listen", "0"));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("fg.log").toFile());
            pb.environment().put("NOTIFY_SOCKET", sock.toString());
            Process serve = pb.start();
            try {
                String got = lines.readLine();
                assertTrue(got != null && got.contains("READY=1") && got.contains("MAINPID=" + serve.pid()),
                        got + " / " + Files.readString(dir.resolve("fg.log")));
                assertTrue(LISTENING.matcher(Files.readString(dir.resolve("fg.log"))).find(),
                        "READY=1 came after the listener was up");
                serve.destroy(); // SIGTERM: a clean stop
                assertTrue(serve.waitFor(60, TimeUnit.SECONDS));
                assertEquals(0, serve.exitValue(), Files.readString(dir.resolve("fg.log")));
            } finally {
                serve.destroyForcibly();
            }
        } finally {
            listener.destroyForcibly();
        }
    }

    @Test
    void benchWaitsForATargetThatIsStartingAndGivesUpInOneLine() throws Exception {
        Path data = volumes();
        int port = FreePorts.next();
        String target = "127.0.0.1:" + port;
        Ran refused = cli(List.of(), "bench", "--transport", "tcp", "--target", target, "--volume", "v1", "--rw",
                "randread", "--seconds", "1", "--connect-timeout", "1s");
        assertEquals(3, refused.code(), refused.out() + refused.err());
        assertEquals(List.of("pistore bench: I/O error: cannot connect to tcp target " + target
                + ": Connection refused (tried for 1 s, every 100 ms)"), refused.err().strip().lines().toList());
        Ran gateway = cli(List.of(), "serve", "--nbd", "127.0.0.1:0", "--transport", "tcp", "--target", target);
        assertEquals(3, gateway.code(), gateway.out() + gateway.err());
        assertTrue(gateway.err().contains("cannot reach target " + target), gateway.err());

        // the bench starts first and waits; the server comes up while it does
        ProcessBuilder pb = new ProcessBuilder(PistoreProcess.command(List.of(), "bench", "--transport", "tcp",
                "--target", target, "--volume", "v1", "--rw", "randread", "--seconds", "1", "--ramp", "0",
                "--connect-timeout", "120s")).redirectErrorStream(true).redirectOutput(dir.resolve("bench.log").toFile());
        Process bench = pb.start();
        Path pidFile = dir.resolve("serve.pid");
        try {
            Ran serve = cli(List.of(), "serve", "--daemon", "--data", data.toString(), "--listen", target,
                    "--pid-file", pidFile.toString());
            assertEquals(0, serve.code(), serve.err());
            assertTrue(bench.waitFor(120, TimeUnit.SECONDS));
            assertEquals(0, bench.exitValue(), Files.readString(dir.resolve("bench.log")));
        } finally {
            bench.destroyForcibly();
            Ran stop = cli(List.of(), "stop", "--pid-file", pidFile.toString());
            assertEquals(0, stop.code(), stop.err());
        }
    }

    @Test
    void benchInterruptedPrintsItsSummaryAndExitsWithItsCode() throws Exception {
        Process bench = new ProcessBuilder(PistoreProcess.command(List.of(), "bench", "--seconds", "300", "--ramp", "1",
                "--size", "64MiB", "--qd", "4")).redirectErrorStream(true).start();
        List<String> lines = new ArrayList<>();
        try {
            var r = bench.inputReader(StandardCharsets.UTF_8);
            String l;
            while ((l = r.readLine()) != null) {
                lines.add(l);
                if (l.startsWith("[local   2s]")) {
                    break;
                }
            }
            String ramp = lines.stream().filter(x -> x.startsWith("[local   1s ramp]")).findFirst().orElseThrow();
            assertTrue(ramp.matches(".* p99_us=\\d+\\.\\d errors=0"), "a ramp second shows its own p99: " + ramp);
            CtrlC.send(bench.pid());
            while ((l = r.readLine()) != null) {
                lines.add(l);
            }
            assertTrue(bench.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, bench.exitValue(), String.join("\n", lines));
            String summary = lines.stream().filter(x -> x.startsWith("transport=local")).findFirst().orElseThrow(
                    () -> new AssertionError("no summary: " + lines));
            double secs = Double.parseDouble(summary.replaceAll(".* seconds=", ""));
            assertTrue(secs > 0 && secs < 300, summary);
            assertTrue(lines.contains("pistore bench: interrupted; the results above cover the time it ran"),
                    String.join("\n", lines));
        } finally {
            bench.destroyForcibly();
        }
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }
}
