package io.pistore.app.cli.serve;

import java.net.InetSocketAddress;

/**
 * How {@code serve}'s start-up lines name an address, the same way for every listener: a wildcard
 * address is {@code every address, port N}, another {@code HOST:PORT}; the local transport, whose
 * address is a name inside the process, says it has no network listener. A bare port given for an address means 127.0.0.1.
 */
final class StartupLines {
    private StartupLines() {
    }

    /** {@code PORT} as {@code 127.0.0.1:PORT}, as {@code --nbd} and {@code --metrics} take it; else unchanged. */
    static String withHost(String address) {
        return address != null && address.matches("\\d{1,5}") ? "127.0.0.1:" + address : address;
    }

    /** Where a transport listener is, for its start-up line. */
    static String where(String transport, String listenerAddress) {
        if (transport.equals("local")) {
            return "local " + listenerAddress + " (a name inside this process, no network listener)";
        }
        InetSocketAddress a;
        try {
            a = io.pistore.frontend.nbd.NbdServer.parseAddress(listenerAddress);
        } catch (IllegalArgumentException e) {
            return transport + " " + listenerAddress;
        }
        return transport + " " + (a.getAddress() != null && a.getAddress().isAnyLocalAddress()
                ? "every address, port " + a.getPort() : listenerAddress);
    }

    /** What the transport does with the PI of the formats its NIC offloads. */
    static String offload(String transport, Object guards) {
        return transport + " offloads the PI of 8-byte tuples with guards " + guards + " to the NIC's signature "
                + "engine (on the software NIC, that engine is software too); other formats in software";
    }
}
