package io.pistore.security.tls;

import java.util.Locale;

/**
 * Which implementation encrypts and decrypts the TLS records of x509 TLS (the tcp transport and
 * NBD with certificates; pre-shared keys always run on Bouncy Castle's TLS). Both speak the same
 * TLS 1.3 on the wire and check certificates through the same trust and key managers; they differ
 * in CPU per byte, where the native one (BoringSSL through Netty's OpenSSL engine) costs less than
 * the JDK's record layer (docs/BENCHMARKS.md#tls-on-the-tcp-transport).
 */
public enum TlsEngine {
    /** OpenSSL when its native library loads here, else the JDK's. The default. */
    AUTO,
    /** Netty's OpenSSL engine over BoringSSL; a server or client that asks for it and cannot have it does not start. */
    OPENSSL,
    /** The JDK's own SSLEngine. */
    JDK;

    /** The name users write: {@code auto}, {@code openssl}, {@code jdk}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The engine a setting names.
     *
     * @throws IllegalArgumentException with a one-line message for any other word
     */
    public static TlsEngine parse(String s) {
        if (s != null) {
            for (TlsEngine e : values()) {
                if (e.label().equals(s.trim().toLowerCase(Locale.ROOT))) {
                    return e;
                }
            }
        }
        throw new IllegalArgumentException("TLS engine must be auto, openssl or jdk, not '" + s + "'");
    }

    /**
     * The engine that will run: {@link #OPENSSL} or {@link #JDK}.
     *
     * @throws TlsFileException (one line, naming the library's reason) when {@link #OPENSSL} is
     *         asked for and {@code lib} is not available
     */
    public TlsEngine resolve(NativeTls lib) {
        switch (this) {
            case JDK:
                return JDK;
            case OPENSSL:
                if (!lib.available()) {
                    throw new TlsFileException("TLS engine openssl is not available here: "
                            + oneLine(lib.unavailabilityCause()) + " (the jdk engine needs no native library)");
                }
                return OPENSSL;
            default:
                return lib.available() ? OPENSSL : JDK;
        }
    }

    /**
     * For log lines, on an engine {@link #resolve} returned: {@code openssl (BoringSSL)} (the
     * library's own name and version) or {@code jdk}.
     */
    public String describe(NativeTls lib) {
        if (this != OPENSSL) {
            return label();
        }
        String v = lib.version();
        return label() + (v == null ? "" : " (" + v + ")");
    }

    /** A cause and its causes on one line, so that the error stays one line. */
    static String oneLine(Throwable t) {
        if (t == null) {
            return "no reason given";
        }
        StringBuilder b = new StringBuilder();
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
            if (b.length() > 0) {
                b.append("; caused by ");
            }
            String m = c.getMessage();
            b.append(c.getClass().getSimpleName()).append(m == null ? "" : ": " + m);
        }
        return b.toString().replaceAll("\\s*[\\r\\n]+\\s*", " ");
    }
}
