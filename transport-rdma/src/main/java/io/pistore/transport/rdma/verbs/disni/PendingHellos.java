package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A listener's accepted hellos waiting for their RDMA connect request, each with the resources the
 * handler gave it. A connect request takes the hello from the same address and port, else the only
 * one from its IP (none, or an ambiguous pair: no match). An entry not taken within its time to live
 * is dropped and its CQs closed, so a host that said hello and vanished leaks nothing.
 */
final class PendingHellos {
    /** A hello's accepted resources, waiting for its RDMA connect request. */
    record Pending(InetSocketAddress dataSource, ConnectHandler.Accept accept, ByteBuffer privateData,
                   long expiresNanos) {
        /** Closes the CQs the handler made for this connection (they are not used now). */
        void release() {
            accept.sendCq().close();
            if (accept.recvCq() != accept.sendCq()) {
                accept.recvCq().close();
            }
        }
    }

    private final List<Pending> pending = new ArrayList<>();
    private final long ttlNanos;
    private final LongSupplier clock;

    /** Entries live {@code ttlNanos} as {@code clock} (nanoseconds, as {@link System#nanoTime}) counts. */
    PendingHellos(long ttlNanos, LongSupplier clock) {
        this.ttlNanos = ttlNanos;
        this.clock = clock;
    }

    void add(InetSocketAddress dataSource, ConnectHandler.Accept accept, ByteBuffer privateData) {
        synchronized (pending) {
            expire();
            pending.add(new Pending(dataSource, accept, privateData, clock.getAsLong() + ttlNanos));
        }
    }

    /** The pending hello for a connect request from {@code peer}: same address and port, else the only one from that IP. */
    Pending take(InetSocketAddress peer) {
        synchronized (pending) {
            expire();
            Pending sameIp = null;
            int sameIpCount = 0;
            for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (p.dataSource().equals(peer)) {
                    it.remove();
                    return p;
                }
                if (peer != null && p.dataSource().getAddress().equals(peer.getAddress())) {
                    sameIp = p;
                    sameIpCount++;
                }
            }
            if (sameIpCount == 1) {
                pending.remove(sameIp);
                return sameIp;
            }
            return null;
        }
    }

    int size() {
        synchronized (pending) {
            return pending.size();
        }
    }

    /** Drops every entry, releasing its resources (the listener is closing). */
    void clear() {
        synchronized (pending) {
            for (Pending p : pending) {
                p.release();
            }
            pending.clear();
        }
    }

    private void expire() {
        long now = clock.getAsLong();
        for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (now - p.expiresNanos() > 0) {
                it.remove();
                p.release();
            }
        }
    }
}
