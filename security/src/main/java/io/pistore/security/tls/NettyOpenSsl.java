package io.pistore.security.tls;

import io.netty.handler.ssl.OpenSsl;

/**
 * {@link NativeTls} through Netty's {@link OpenSsl}: loading its class loads the native library
 * once for the process. A missing Netty jar is an unavailable library too, not a crash.
 */
final class NettyOpenSsl implements NativeTls {
    @Override
    public boolean available() {
        try {
            return OpenSsl.isAvailable();
        } catch (LinkageError e) {
            return false;
        }
    }

    @Override
    public Throwable unavailabilityCause() {
        try {
            return OpenSsl.unavailabilityCause();
        } catch (LinkageError e) {
            return e;
        }
    }

    @Override
    public String version() {
        return available() ? OpenSsl.versionString() : null;
    }
}
