package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.WrOpcode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The JVM-wide "network" of soft devices: listeners by address (the fast path when both ends are in
 * this process), QP numbers, one timer thread for receiver-not-ready retries, acknowledgement timers
 * and connection events, test hooks on the bytes that cross the wire, and the packet path's counters.
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
    private static volatile PacketTap packetTap;
    private static final java.util.concurrent.atomic.LongAdder DROPPED = new java.util.concurrent.atomic.LongAdder();
    private static final java.util.concurrent.atomic.LongAdder RETRANSMITTED = new java.util.concurrent.atomic.LongAdder();
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

    /** The wire tap on a payload at {@code at} of a packet being built (before its CRC). */
    static void tap(WrOpcode op, byte[] buf, int at, int len) {
        WireTap t = tap;
        if (t != null) {
            byte[] copy = java.util.Arrays.copyOfRange(buf, at, at + len);
            t.onWire(op, copy, len);
            System.arraycopy(copy, 0, buf, at, len);
        }
    }

    /**
     * Sees (and may change) each frame of the packet path after its CRC was computed, just before
     * it is written to the socket: a corruption on the link, which the receiver's CRC check catches.
     */
    public interface PacketTap {
        void onPacket(byte[] frame, int length);
    }

    /** Installs (or with null removes) the packet tap. */
    public static void setPacketTap(PacketTap t) {
        packetTap = t;
    }

    static void packetTap(byte[] frame, int len) {
        PacketTap t = packetTap;
        if (t != null) {
            t.onPacket(frame, len);
        }
    }

    /** Frames this process's soft devices dropped because their CRC did not match. */
    public static long packetsDroppedForCrc() {
        return DROPPED.sum();
    }

    /** Frames this process's soft devices sent again (go-back-N after a NAK, a drop or a timeout). */
    public static long packetsRetransmitted() {
        return RETRANSMITTED.sum();
    }

    static void droppedForCrc() {
        DROPPED.increment();
    }

    static void retransmitted(int n) {
        RETRANSMITTED.add(n);
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
