package io.pistore.frontend.nbd;

import java.util.Locale;

/**
 * Whether the NBD server offers TLS (NBD_OPT_STARTTLS), with the meaning qemu-nbd and nbdkit give
 * {@code --tls}: {@link #OFF} refuses STARTTLS; {@link #ON} lets each client choose; {@link #REQUIRE}
 * answers every option before STARTTLS with NBD_REP_ERR_TLS_REQD and ends a session that asks for
 * an export with NBD_OPT_EXPORT_NAME in plaintext.
 */
public enum NbdTls {
    OFF, ON, REQUIRE;

    /** {@code off}, {@code on} or {@code require} (any case). */
    public static NbdTls parse(String s) {
        try {
            return valueOf(s.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("NBD TLS must be off, on or require, not '" + s + "'");
        }
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
