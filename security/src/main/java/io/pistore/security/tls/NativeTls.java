package io.pistore.security.tls;

/**
 * Whether the native TLS library (BoringSSL, loaded by Netty's netty-tcnative from its jar) can
 * run TLS in this process, and if not why. An interface so that a test can stand in a library that
 * did not load; {@link #NETTY} asks Netty.
 */
public interface NativeTls {
    /** Whether the library loaded and its engine can be used. */
    boolean available();

    /** Why it cannot be used (null when it can). */
    Throwable unavailabilityCause();

    /** The library's name and version for a log line ("BoringSSL"), or null when it is not available. */
    String version();

    /** Netty's own probe ({@code io.netty.handler.ssl.OpenSsl}), which loads the library on first use. */
    NativeTls NETTY = new NettyOpenSsl();
}
