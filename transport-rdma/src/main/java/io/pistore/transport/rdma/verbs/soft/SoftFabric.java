package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.WrOpcode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The JVM-wide "network" of soft devices: listeners by address, QP numbers, one timer thread for
 * receiver-not-ready retries and connection events, and a test hook on the bytes that cross the wire.
 */
public final class SoftFabric {
    /** Sees (and may change) the payload of each RDMA READ and WRITE as it crosses the wire. */
    public interface WireTap {
        void onWire(WrOpcode op, byte[] payload, int length);
    }

    static final Map<String, SoftDevice.SoftListener> LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(20000);
    private static final AtomicInteger NEXT_QP = new AtomicInteger(0x100);
    private static volatile WireTap tap;
    private static volatile ScheduledThreadPoolExecutor timer;

    private SoftFabric() {
    }

    /** Installs (or with null removes) the wire tap; tests use it to corrupt data in flight. */
    public static void setWireTap(WireTap t) {
        tap = t;
    }

    static void tap(WrOpcode op, byte[] payload, int len) {
        WireTap t = tap;
        if (t != null) {
            t.onWire(op, payload, len);
        }
    }

    static int nextQpNum() {
        return NEXT_QP.getAndIncrement() & 0xFFFFFF;
    }

    static int nextPort() {
        return NEXT_PORT.getAndIncrement();
    }

    static void schedule(Runnable r, long delayNanos) {
        ScheduledThreadPoolExecutor t = timer;
        if (t == null) {
            synchronized (SoftFabric.class) {
                t = timer;
                if (t == null) {
                    t = new ScheduledThreadPoolExecutor(1, run -> {
                        Thread th = new Thread(run, "pistore-softnic-timer");
                        th.setDaemon(true);
                        return th;
                    });
                    t.setRemoveOnCancelPolicy(true);
                    timer = t;
                }
            }
        }
        t.schedule(r, delayNanos, TimeUnit.NANOSECONDS);
    }
}
