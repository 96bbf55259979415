package io.pistore.transport.rdma.verbs.disni;

import java.util.Arrays;
import java.util.function.Consumer;

/** An open-addressing map from long to V (no boxing on lookup). Not thread-safe. */
final class LongMap<V> {
    private long[] keys = new long[16];
    private Object[] vals = new Object[16];
    private int size;

    @SuppressWarnings("unchecked")
    V get(long k) {
        int mask = keys.length - 1;
        for (int i = hash(k) & mask; ; i = (i + 1) & mask) {
            Object v = vals[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == k) {
                return (V) v;
            }
        }
    }

    void put(long k, V v) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        for (int i = hash(k) & mask; ; i = (i + 1) & mask) {
            if (vals[i] == null) {
                keys[i] = k;
                vals[i] = v;
                size++;
                return;
            }
            if (keys[i] == k) {
                vals[i] = v;
                return;
            }
        }
    }

    @SuppressWarnings("unchecked")
    void forEach(Consumer<V> c) {
        for (Object v : vals) {
            if (v != null) {
                c.accept((V) v);
            }
        }
    }

    void clear() {
        Arrays.fill(vals, null);
        size = 0;
    }

    int size() {
        return size;
    }

    private void grow() {
        long[] ok = keys;
        Object[] ov = vals;
        keys = new long[ok.length * 2];
        vals = new Object[ov.length * 2];
        size = 0;
        for (int i = 0; i < ok.length; i++) {
            if (ov[i] != null) {
                @SuppressWarnings("unchecked") V v = (V) ov[i];
                put(ok[i], v);
            }
        }
    }

    private static int hash(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
