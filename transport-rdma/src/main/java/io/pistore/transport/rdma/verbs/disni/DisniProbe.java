package io.pistore.transport.rdma.verbs.disni;

import io.pistore.spi.Availability;

/**
 * Whether DiSNI can run here, checked in an order that never loads what cannot load:
 * <ol>
 *   <li>the DiSNI classes are on the class path;
 *   <li>{@code java.base} exports {@code sun.nio.ch} to DiSNI (it casts to
 *       {@code sun.nio.ch.DirectBuffer}; JDK 17 needs {@code --add-exports
 *       java.base/sun.nio.ch=ALL-UNNAMED}, otherwise every registration fails with IllegalAccessError);
 *   <li>{@code libdisni} loads ({@code RdmaVerbs.open()}; an UnsatisfiedLinkError is an Error, caught here);
 *   <li>an RDMA device exists ({@code rdma_create_event_channel} fails with ENODEV otherwise).
 * </ol>
 * Each failure is one line. The result is cached: a failed {@code <clinit>} is permanent for the JVM.
 */
final class DisniProbe {
    /** The steps, replaceable in tests. */
    interface Steps {
        void classes() throws Throwable;

        boolean sunNioChExported();

        void openVerbs() throws Throwable;

        void eventChannel() throws Throwable;
    }

    static final Steps REAL = new Steps() {
        @Override
        public void classes() throws ClassNotFoundException {
            Class.forName("com.ibm.disni.verbs.RdmaVerbs", false, DisniProbe.class.getClassLoader());
        }

        @Override
        public boolean sunNioChExported() {
            Module base = Object.class.getModule();
            return base.isExported("sun.nio.ch", DisniProbe.class.getModule());
        }

        @Override
        public void openVerbs() throws java.io.IOException {
            com.ibm.disni.verbs.RdmaVerbs.open();
        }

        @Override
        public void eventChannel() throws java.io.IOException {
            com.ibm.disni.verbs.RdmaEventChannel ch = com.ibm.disni.verbs.RdmaEventChannel.createEventChannel();
            ch.destroyEventChannel();
        }
    };

    private DisniProbe() {
    }

    static Availability run(Steps s) {
        try {
            s.classes();
        } catch (Throwable t) {
            return Availability.unavailable("the DiSNI jar (com.ibm.disni:disni) is not on the class path");
        }
        if (!s.sunNioChExported()) {
            return Availability.unavailable("DiSNI needs the JVM option --add-exports java.base/sun.nio.ch=ALL-UNNAMED");
        }
        try {
            s.openVerbs();
        } catch (LinkageError e) {
            String m = e.getMessage() == null ? e.toString() : e.getMessage();
            if (e instanceof UnsatisfiedLinkError || m.contains("disni")) {
                return Availability.unavailable("libdisni not found (" + firstLine(m)
                        + "); build it from DiSNI's libdisni/ and pass -Djava.library.path");
            }
            return Availability.unavailable("DiSNI failed to load: " + firstLine(e.toString()));
        } catch (Throwable t) {
            return Availability.unavailable("DiSNI failed to open verbs: " + firstLine(t.toString()));
        }
        try {
            s.eventChannel();
        } catch (Throwable t) {
            return Availability.unavailable("no RDMA device (" + firstLine(t.getMessage() == null ? t.toString()
                    : t.getMessage()) + ")");
        }
        return Availability.available();
    }

    static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        String line = nl < 0 ? t : t.substring(0, nl);
        return line.length() > 160 ? line.substring(0, 157) + "..." : line;
    }
}
