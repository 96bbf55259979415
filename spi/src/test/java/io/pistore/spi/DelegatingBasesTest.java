package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The delegating bases pass on every method of their interface, defaults included: a default left to
 * the interface would answer for the wrapped connection or handler (no shared state, one path) on
 * every connection or handler built on the base.
 */
class DelegatingBasesTest {
    private static List<String> notPassedOn(Class<?> api, Class<?> base) throws NoSuchMethodException {
        List<String> missing = new ArrayList<>();
        for (Method m : api.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            if (base.getMethod(m.getName(), m.getParameterTypes()).getDeclaringClass() != base) {
                missing.add(m.getName());
            }
        }
        return missing;
    }

    @Test
    void everyMethodIsPassedOn() throws Exception {
        assertEquals(List.of(), notPassedOn(TargetHandler.class, DelegatingTargetHandler.class));
        assertEquals(List.of(), notPassedOn(HostConnection.class, DelegatingHostConnection.class));
    }
}
