package io.pistore.it.reliability;

import io.pistore.it.CliJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code pistore} CLI command in a process of its own, started as {@link CliJvm} says (the built
 * engine and transport jars and their libraries, which is what the {@code pistore} launcher runs). Output lines are kept; the test
 * stops the process it started, by its handle, never by name.
 */
final class PistoreProcess implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile("^pistore serve: .* on \\S+ (\\S+:\\d+)\\s*$");
    private static final Pattern SERVING_NBD = Pattern.compile("^pistore serve: NBD on (\\S+:\\d+), .*$");

    final Process process;
    /** Every line so far; appended by the reader thread, read by tests while it runs (a snapshot per iteration). */
    final List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
    private final Thread reader;

    private PistoreProcess(Process p) {
        this.process = p;
        this.reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                    queue.add(l);
                }
            } catch (IOException e) {
                // the process went away
            }
            queue.add("\u0000eof");
        }, "pistore-process-out");
        reader.setDaemon(true);
        reader.start();
    }

    static List<String> command(List<String> jvmOptions, String... args) {
        List<String> cmd = CliJvm.command(jvmOptions);
        cmd.addAll(List.of(args));
        return cmd;
    }

    static PistoreProcess start(List<String> jvmOptions, String... args) throws IOException {
        return start(List.of(), jvmOptions, args);
    }

    /**
     * The command run through {@code prefix} (e.g. {@code ip netns exec NS}, which enters the
     * namespace and executes the JVM in its own process, so the handle still stops the JVM).
     */
    static PistoreProcess start(List<String> prefix, List<String> jvmOptions, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(command(jvmOptions, args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        return new PistoreProcess(pb.start());
    }

    /** Starts {@code pistore serve ARGS} and waits until it says where it listens; returns that address. */
    static PistoreProcess serve(List<String> jvmOptions, String... args) throws IOException {
        List<String> a = new ArrayList<>(List.of("serve"));
        a.addAll(List.of(args));
        return start(jvmOptions, a.toArray(new String[0]));
    }

    /** The address a serve process printed (waits up to 60 s). */
    String awaitListening() throws InterruptedException {
        return awaitAddress(SERVING);
    }

    /** The NBD address a {@code serve --nbd} process printed (waits up to 60 s). */
    String awaitNbdListening() throws InterruptedException {
        return awaitAddress(SERVING_NBD);
    }

    private String awaitAddress(Pattern serving) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < end) {
            String l = queue.poll(100, TimeUnit.MILLISECONDS);
            if (l == null) {
                continue;
            }
            if (l.equals("\u0000eof")) {
                // the exit status tells a signal (128 + N: the OOM killer's 9) from one of pistore's exit codes
                String status = process.waitFor(5, TimeUnit.SECONDS) ? "exit status " + process.exitValue() : "still running";
                throw new IllegalStateException("pistore serve ended before listening (" + status + "): " + lines);
            }
            Matcher m = serving.matcher(l);
            if (m.matches()) {
                return m.group(1);
            }
        }
        throw new IllegalStateException("pistore serve did not say where it listens: " + lines);
    }

    /** Waits for the process to end; its exit code. */
    int await(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new IllegalStateException("process did not end within " + seconds + " s: " + lines);
        }
        reader.join(5000);
        return process.exitValue();
    }

    /**
     * Waits until the process printed a line that {@code want} accepts ({@code what} names it), at
     * most {@code seconds} (a hang guard); fails with everything the process printed.
     */
    void awaitLine(String what, java.util.function.Predicate<String> want, int seconds) {
        try {
            io.pistore.testkit.Eventually.await(what, java.time.Duration.ofSeconds(seconds),
                    () -> lines.stream().anyMatch(want));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + output(), e);
        }
    }

    String output() {
        return String.join("\n", lines);
    }

    /** The process id (for signals such as SIGSTOP). */
    long pid() {
        return process.pid();
    }

    /** kill -9. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /**
     * SIGTERM, as an operator stops the server: {@code serve} flushes its volumes and exits. Throws
     * when it did not end within 30 s (then it is killed).
     */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            kill();
            throw new IllegalStateException("pistore serve did not stop within 30 s of SIGTERM: " + output());
        }
        reader.join(5000);
    }

    /**
     * {@link #stop} of several processes (nulls skipped), at once: SIGTERM to each first, then the
     * waits, so a group of peers stops in the time of its slowest (a peer's Raft server takes about
     * a second to close), not in the sum.
     */
    static void stopAll(PistoreProcess... ps) throws InterruptedException {
        terminate(ps);
        for (PistoreProcess p : ps) {
            if (p != null) {
                p.stop();
            }
        }
    }

    /** {@link #close} of several processes (nulls skipped), at once, as {@link #stopAll} does. */
    static void closeAll(PistoreProcess... ps) throws InterruptedException {
        terminate(ps);
        for (PistoreProcess p : ps) {
            if (p != null) {
                p.close();
            }
        }
    }

    private static void terminate(PistoreProcess... ps) {
        for (PistoreProcess p : ps) {
            if (p != null && p.process.isAlive()) {
                p.process.destroy();
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy(); // SIGTERM: serve flushes and stops
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }
}
