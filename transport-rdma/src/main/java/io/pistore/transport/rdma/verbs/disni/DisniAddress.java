package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.net.Inet4Address;
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

    /**
     * {@code HOST:PORT} with an IPv4 host; the port leaves room for the control port. IPv6 is refused:
     * DiSNI 2.1 builds a {@code sockaddr_in} from the address bytes whatever their family, so an
     * IPv6 address would bind or connect to a wrong IPv4 address.
     */
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
        InetAddress ip;
        try {
            ip = InetAddress.getByName(host);
        } catch (IOException e) {
            throw new VerbsException(VerbsException.EINVAL, "disni: unknown host '" + host + "'");
        }
        if (!(ip instanceof Inet4Address)) {
            throw new VerbsException(VerbsException.EINVAL, "disni: '" + address
                    + "' is an IPv6 address; DiSNI 2.1 supports IPv4 only (give the device's IPv4 address)");
        }
        return new InetSocketAddress(ip, port);
    }

    /** The control listener beside the RDMA CM endpoint {@code cm}. */
    static InetSocketAddress control(InetSocketAddress cm) {
        return new InetSocketAddress(cm.getAddress(), cm.getPort() + CONTROL_PORT_OFFSET);
    }
}
