package io.pistore.transport.tcp.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Collects the transport's log lines (java.util.logging is the System.Logger backend). */
final class LogCapture extends Handler implements AutoCloseable {
    private final Logger logger = Logger.getLogger("io.pistore.transport.tcp");
    private final List<LogRecord> records = new ArrayList<>();

    LogCapture() {
        logger.addHandler(this);
    }

    @Override
    public synchronized void publish(LogRecord r) {
        records.add(r);
        notifyAll();
    }

    synchronized List<String> warnings() {
        return atLeast(Level.WARNING);
    }

    synchronized List<String> all() {
        return atLeast(Level.ALL);
    }

    private List<String> atLeast(Level level) {
        List<String> l = new ArrayList<>();
        for (LogRecord r : records) {
            if (r.getLevel().intValue() >= level.intValue()) {
                l.add(r.getMessage());
            }
        }
        return l;
    }

    /** Waits until a warning containing every fragment is logged, and returns it; null on timeout. */
    synchronized String awaitWarning(long millis, String... fragments) throws InterruptedException {
        return await(Level.WARNING, millis, fragments);
    }

    /** Waits until a line of level INFO or above containing every fragment is logged; null on timeout. */
    synchronized String awaitInfo(long millis, String... fragments) throws InterruptedException {
        return await(Level.INFO, millis, fragments);
    }

    private String await(Level level, long millis, String... fragments) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            for (String w : atLeast(level)) {
                boolean all = true;
                for (String f : fragments) {
                    all &= w.contains(f);
                }
                if (all) {
                    return w;
                }
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
