package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/**
 * The active side of the connect hello: one TCP connection to the target's control listener
 * ({@link HelloServer}) that carries the private data out and the handler's verdict back, before the
 * RDMA connect (DiSNI does not hand connect private data to the passive side; see {@link ConnectHello}).
 */
final class HelloClient {
    private HelloClient() {
    }

    /**
     * Says hello to {@code control} for the data cm_id whose resolved source is {@code src}; returns
     * when the hello is accepted. A refusal, a failed or silent control connection end the connect
     * with a {@link VerbsException} whose message starts with {@code where}.
     */
    static void exchange(InetSocketAddress control, InetSocketAddress src, ByteBuffer privateData, long deadline,
                         String where) throws IOException {
        ConnectHello.Verdict v;
        try (Socket s = new Socket()) {
            s.connect(control, ActiveConnector.millisLeft(deadline));
            s.setSoTimeout(ActiveConnector.millisLeft(deadline));
            s.setTcpNoDelay(true);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            ConnectHello.write(out, ConnectHello.encodeHello(src, privateData));
            v = ConnectHello.decodeVerdict(ConnectHello.read(in));
        } catch (SocketTimeoutException e) {
            throw new VerbsException(VerbsException.ETIMEDOUT, where + "no answer from the control listener at "
                    + control + " before the deadline");
        } catch (IOException e) {
            if (e instanceof VerbsException) {
                throw e;
            }
            throw new VerbsException(VerbsException.ECONNREFUSED, where + "control connection to " + control
                    + " failed: " + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
        if (!v.accepted()) {
            throw new VerbsException(VerbsException.ECONNREFUSED, where + "rejected: " + v.message());
        }
    }
}
