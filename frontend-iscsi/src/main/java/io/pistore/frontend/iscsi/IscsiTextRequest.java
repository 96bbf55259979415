package io.pistore.frontend.iscsi;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The answer to a Text Request of the full feature phase: the targets SendTargets asks for (those
 * the session's identity may see, each at the portal the connection came in on), then the answers
 * to the other keys, bounded by what the initiator declared it receives.
 */
final class IscsiTextRequest {
    private IscsiTextRequest() {
    }

    /** The Text Response's data for the keys in {@code request} on {@code socket}'s connection. */
    static byte[] answer(byte[] request, IscsiLogin.Outcome session, IscsiServer server, Socket socket)
            throws IscsiProtocolException {
        Map<String, String> keys = TextKeys.parse(request);
        Map<String, String> answer = new LinkedHashMap<>();
        StringBuilder targets = new StringBuilder();
        String st = keys.remove("SendTargets");
        if (st != null) {
            for (String name : server.targetNamesFor(session.identity())) {
                boolean wanted = st.equals("All") && session.discovery() || st.equalsIgnoreCase(name)
                        || st.isEmpty() && !session.discovery() && name.equalsIgnoreCase(session.targetName());
                if (wanted) {
                    targets.append("TargetName=").append(name).append('\0');
                    targets.append("TargetAddress=").append(portal(socket)).append(",1").append('\0');
                }
            }
        }
        answer.putAll(session.params().answer(keys, session.discovery()));
        return TextKeys.joinBounded(targets.toString().getBytes(StandardCharsets.UTF_8), TextKeys.format(answer),
                session.params().initiatorMaxRecvData);
    }

    private static String portal(Socket socket) {
        InetSocketAddress a = (InetSocketAddress) socket.getLocalSocketAddress();
        String host = a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
