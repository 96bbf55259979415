package io.pistore.transport.tcp.internal;

/**
 * A host queue's command slots: one per request the target granted room for. A request in flight
 * holds a slot; its command id is the slot in the low 16 bits and the slot's generation (bumped on
 * each use, 16 bits) above, so a response to a request whose slot was freed and reused is told
 * apart from a response to the slot's current request. Loop thread only.
 */
final class CommandSlots<T> {
    private final Object[] slots;
    private final int[] generation;
    private final int[] free;
    private int freeTop;

    CommandSlots(int depth) {
        slots = new Object[depth];
        generation = new int[depth];
        free = new int[depth];
        for (int i = 0; i < depth; i++) {
            free[i] = depth - 1 - i;
        }
        freeTop = depth;
    }

    /** Puts {@code t} in a free slot (the caller keeps at most {@link #capacity} in flight); returns its command id. */
    int claim(T t) {
        int s = free[--freeTop];
        generation[s] = (generation[s] + 1) & 0xFFFF;
        slots[s] = t;
        return generation[s] << 16 | s;
    }

    /** What holds {@code commandId} now, or null (no such slot, a free slot, or an earlier generation). */
    T find(int commandId) {
        int s = commandId & 0xFFFF;
        if (s >= slots.length || generation[s] != commandId >>> 16) {
            return null;
        }
        return at(s);
    }

    /** Frees the slot of {@code commandId} (a claimed id). */
    void release(int commandId) {
        int s = commandId & 0xFFFF;
        slots[s] = null;
        free[freeTop++] = s;
    }

    int capacity() {
        return slots.length;
    }

    /** What holds slot {@code s}, or null. */
    @SuppressWarnings("unchecked")
    T at(int s) {
        return (T) slots[s];
    }
}
