package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every method of {@link Volume}, the defaults included, reaches the wrapped volume as it was called:
 * a default left to the interface would answer for the wrapper instead (a replicated volume's waits
 * for peers, its asynchronous writes, its read times).
 */
class ForwardingVolumeTest {
    private record Call(Method method, Object[] args) {
    }

    private static Object sample(Class<?> t, int i) {
        if (t == long.class) {
            return 100L + i;
        }
        if (t == int.class) {
            return 10 + i;
        }
        if (t == boolean.class) {
            return true;
        }
        if (t == io.pistore.integrity.ScatterList.class) {
            return io.pistore.integrity.ScatterList.wrap(new byte[8 + i]);
        }
        if (t == io.pistore.spi.PiDuty.class) {
            return io.pistore.spi.PiDuty.NONE;
        }
        return null; // a write fence: none
    }

    @Test
    void everyCallReachesTheWrappedVolumeWithItsArguments() throws Exception {
        List<Call> seen = new ArrayList<>();
        Volume inner = (Volume) Proxy.newProxyInstance(Volume.class.getClassLoader(), new Class<?>[] {Volume.class},
                (proxy, m, args) -> {
                    seen.add(new Call(m, args == null ? new Object[0] : args));
                    Class<?> r = m.getReturnType();
                    return r == boolean.class ? Boolean.FALSE : r == long.class ? 0L : null;
                });
        Volume outer = new ForwardingVolume(inner) { };
        int n = 0;
        for (Method m : Volume.class.getMethods()) {
            Object[] args = new Object[m.getParameterCount()];
            for (int i = 0; i < args.length; i++) {
                args[i] = sample(m.getParameterTypes()[i], i);
            }
            seen.clear();
            m.invoke(outer, args);
            assertEquals(1, seen.size(), m + " reached the wrapped volume once: " + seen);
            assertEquals(m, seen.get(0).method(), "the same method");
            assertArrayEquals(args, seen.get(0).args(), m + " with the same arguments");
            n++;
        }
        assertEquals(Volume.class.getMethods().length, n);
    }
}
