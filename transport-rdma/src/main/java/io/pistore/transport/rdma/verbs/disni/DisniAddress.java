package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The binding's addresses: {@code HOST:PORT} as the transport names an RDMA CM endpoint, and the
 * TCP control port beside it that carries the connect hello ({@link ConnectHello}).
 */
final class DisniAddress {
    /** The control listener's port: the RDMA CM port plus this. */
    static final int CONTROL_PORT_OFFSET = 1;

    private DisniAddress() {
    }

    /** {@code HOST:PORT} (an IPv6 host may be bracketed); the port leaves room for the control port. */
    static InetSocketAddress parse(String address) throws VerbsException {
        String a = address == null ? "" : address.trim();
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            throw new VerbsException(VerbsException.EINVAL, "disni: address must be HOST:PORT, not '" + address + "'");
        }
        String host = a.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(a.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535 - CONTROL_PORT_OFFSET) {
            throw new VerbsException(VerbsException.EINVAL, "disni: port must be 0 to " + (65535 - CONTROL_PORT_OFFSET)
                    + " in '" + address + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (IOException e) {
            throw new VerbsException(VerbsException.EINVAL, "disni: unknown host '" + host + "'");
        }
    }

    /** The control listener beside the RDMA CM endpoint {@code cm}. */
    static InetSocketAddress control(InetSocketAddress cm) {
        return new InetSocketAddress(cm.getAddress(), cm.getPort() + CONTROL_PORT_OFFSET);
    }
}
