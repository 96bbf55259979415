package io.pistore.app.cli;

import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * {@code pistore serve} run in a thread of the test, stopped as a program embedding it would stop
 * it: by interrupting that thread.
 */
final class ServeThread implements AutoCloseable {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final AtomicInteger code = new AtomicInteger(Integer.MIN_VALUE);
    private final Thread thread;

    ServeThread(String... args) {
        thread = new Thread(() -> code.set(Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args)),
                "serve-under-test");
        thread.start();
    }

    String out() {
        return out.toString();
    }

    String err() {
        return err.toString();
    }

    /** Waits until stdout satisfies {@code ready} or the command has ended. */
    void awaitOutput(Predicate<String> ready) {
        Eventually.await("serve's output to be ready or serve to end", () -> ready.test(out()) || !thread.isAlive());
    }

    /** Interrupts the serving thread and returns the command's exit code. */
    int stop() throws InterruptedException {
        thread.interrupt();
        thread.join(TimeUnit.SECONDS.toMillis(30));
        if (thread.isAlive()) {
            throw new AssertionError("serve did not stop within 30 s of an interrupt: " + out() + " / " + err());
        }
        return code.get();
    }

    @Override
    public void close() throws InterruptedException {
        if (thread.isAlive()) {
            stop();
        }
    }
}
