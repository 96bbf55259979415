package io.pistore.transport.tcp.internal;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;

/** {@code host:port} and {@code [v6]:port} addresses. */
final class Addresses {
    private Addresses() {
    }

    static InetSocketAddress parse(String address) throws IOException {
        if (address == null || address.isBlank()) {
            throw new IOException("a tcp address is host:port, not '" + address + "'");
        }
        String a = address.trim();
        int colon = a.lastIndexOf(':');
        if (colon < 0) {
            throw new IOException("a tcp address is host:port, not '" + address + "'");
        }
        String host = a.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(a.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IOException("bad port in tcp address '" + address + "'");
        }
        if (port < 0 || port > 65535) {
            throw new IOException("port out of range in tcp address '" + address + "'");
        }
        InetSocketAddress s = host.isEmpty() || host.equals("*") ? new InetSocketAddress(port)
                : new InetSocketAddress(host, port);
        if (s.isUnresolved()) {
            throw new IOException("cannot resolve host '" + host + "'");
        }
        return s;
    }

    static String format(InetSocketAddress a) {
        String h = a.getAddress().getHostAddress();
        return (a.getAddress() instanceof Inet6Address ? "[" + h + "]" : h) + ":" + a.getPort();
    }
}
