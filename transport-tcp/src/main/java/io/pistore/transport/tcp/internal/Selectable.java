package io.pistore.transport.tcp.internal;

import java.nio.channels.SelectionKey;

/** What an {@link EventLoop} calls for a registered channel; always on the loop's thread. */
interface Selectable {
    /** The channel is ready for the key's ready operations. */
    void onSelect(SelectionKey key);

    /** The loop shuts down: close without waiting. */
    void onLoopClose(String reason);

    /** Called about once a second (request timeouts). */
    default void onTimer(long nowNanos) {
    }
}
