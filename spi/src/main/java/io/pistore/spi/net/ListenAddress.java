package io.pistore.spi.net;

import java.net.InetSocketAddress;

/**
 * The one rule for a listener's address on the command line, shared by every frontend: {@code HOST:PORT},
 * {@code [V6]:PORT}, {@code :PORT}, {@code PORT}, {@code HOST} or a bare IPv6 address; the host is
 * 127.0.0.1 and the port the protocol's own when left out; port 0 picks a free one.
 */
public final class ListenAddress {
    private ListenAddress() {}

    /**
     * Parses {@code address}; {@code what} names the protocol in the one-line error ("NBD", "iSCSI").
     *
     * @throws IllegalArgumentException a port that is not a number or is out of range
     */
    public static InetSocketAddress parse(String address, int defaultPort, String what) {
        String host = "127.0.0.1";
        int port = defaultPort;
        String s = address == null ? "" : address.strip();
        if (!s.isEmpty()) {
            int colon = s.lastIndexOf(':');
            String portText = null;
            // one colon is HOST:PORT; several are an IPv6 address, with a port only in [V6]:PORT
            if (colon >= 0 && s.indexOf(':') == colon || s.startsWith("[") && s.contains("]:")) {
                if (colon > 0) {
                    host = s.substring(0, colon);
                }
                portText = s.substring(colon + 1);
            } else if (s.chars().allMatch(Character::isDigit)) {
                portText = s;
            } else {
                host = s;
            }
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (portText != null) {
                try {
                    port = Integer.parseInt(portText);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bad port in " + what + " address '" + address + "'");
                }
                if (port < 0 || port > 65535) {
                    throw new IllegalArgumentException("port must be 0 to 65535 in " + what + " address '" + address + "'");
                }
            }
        }
        return new InetSocketAddress(host, port);
    }
}
