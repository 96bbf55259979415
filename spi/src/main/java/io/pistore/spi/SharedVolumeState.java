package io.pistore.spi;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A small value that every target port of one volume shares, changed only by compare-and-set in
 * the order of the volume's writes: a replicated volume keeps it in its Raft log, so each peer
 * applies the same changes at the same place among the writes. A frontend keeps there what all
 * the ports of a unit must agree on (iSCSI: the persistent reservations). The value is the
 * frontend's; the volume only orders, stores and hands it out.
 *
 * <p>A write checked against one version of the value carries that version plus one in its fence
 * ({@link WriteFence#view}); the volume applies it only while the value still has that version,
 * and otherwise refuses it with {@link Status#VIEW_CHANGED} on every replica alike, writing
 * nothing: the sender waits for the newer version ({@link #awaitVersion}), checks again and
 * sends it again or refuses it itself. So no write checked against an older value lands after a
 * change, whichever port it came through.
 *
 * <p>Versions only grow; version 0 with an empty value is a value never set. Kept through restarts
 * and snapshots as long as the volume lives. Safe to call from any thread.
 */
public interface SharedVolumeState {
    /** Most bytes of a value. */
    int MAX_BYTES = 256 * 1024;

    /** A value and its version. */
    record Versioned(long version, byte[] value) {
        public Versioned {
            if (version < 0) {
                throw new IllegalArgumentException("a shared state's version is never negative, not " + version);
            }
        }
    }

    /** The value this port applied last. Cheap; never blocks. */
    Versioned current();

    /**
     * Sets the value to {@code value} when its version is still {@code expected}. The future
     * completes once the change is decided and this port has applied it: with true when it was set
     * ({@link #current} then shows it or a later one), with false when another change came first
     * ({@link #current} then shows at least that one), or with an {@link java.io.IOException} when it
     * could not be decided in time (a replicated volume without a quorum for its operation timeout:
     * it may still be set later). {@code value} is copied; at most {@value #MAX_BYTES} bytes.
     */
    CompletableFuture<Boolean> compareAndSet(long expected, byte[] value);

    /**
     * Completes once this port has applied a version of at least {@code version} (at once when it
     * has), or with an {@link java.io.IOException} when that takes longer than the volume's operation
     * timeout.
     */
    CompletableFuture<Versioned> awaitVersion(long version);

    /**
     * Completes once this port has applied every change decided before the call (a linearizable
     * read of the version: a port that lags behind the one a change was made through catches up),
     * with what it then holds; or with an {@link java.io.IOException} when that cannot be had within
     * the volume's operation timeout.
     */
    CompletableFuture<Versioned> sync();

    /**
     * Completes once every port of the volume that can be reached has taken in version
     * {@code version} (a value whose change its sessions must see at once, as a reset's unit
     * attention, is then theirs), or after the volume's attempt time at most; it never fails. A port
     * applies what it has taken in moments later, on its own thread.
     */
    CompletableFuture<Void> awaitEverywhere(long version);

    /**
     * Calls {@code watcher} with every value this port applies from now on, in version order, on the
     * applying thread: it must be quick and must not block.
     */
    void watch(Consumer<Versioned> watcher);
}
