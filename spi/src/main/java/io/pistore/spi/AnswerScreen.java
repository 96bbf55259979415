package io.pistore.spi;

/**
 * Sees each answer a host queue's connection gets from its peer before the request completes, and
 * may answer otherwise: how a {@link ReconnectingHostQueue} given a list of peers learns that its
 * peer has no volume the host uses ({@link Status#NO_SUCH_VOLUME}) and moves to another peer. Called
 * on the thread that completes the request; must not block.
 */
@FunctionalInterface
public interface AnswerScreen {
    /** The completion to give the caller of a request of {@code volume} that the peer answered {@code answer}. */
    Completion screen(String volume, Completion answer);
}
