package io.pistore.it.ops;

import io.pistore.app.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code pistore serve} in a thread of the test, stopped by an interrupt as an embedding program would. */
final class ServeInThread implements AutoCloseable {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final Thread thread;

    ServeInThread(String... args) {
        thread = new Thread(() -> Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args), "serve");
        thread.start();
    }

    String out() {
        return out.toString();
    }

    /** The first group of {@code pattern} in the output, waiting up to 30 s for it. */
    String await(String pattern) throws InterruptedException {
        Pattern p = Pattern.compile(pattern);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            Matcher m = p.matcher(out());
            if (m.find()) {
                return m.group(1);
            }
            if (!thread.isAlive()) {
                break;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("serve never printed " + pattern + ": " + out() + " / " + err);
    }

    @Override
    public void close() throws InterruptedException {
        thread.interrupt();
        thread.join(TimeUnit.SECONDS.toMillis(30));
    }
}
