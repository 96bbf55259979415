package io.pistore.frontend.nbd;

import static io.pistore.frontend.nbd.NbdProtocol.*;

import io.pistore.security.access.AccessRules;
import io.pistore.security.access.ClientIdentity;
import io.pistore.security.tls.TlsStream;
import io.pistore.spi.VolumeInfo;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * The fixed newstyle handshake of one connection: the greeting, then the options (NBD_OPT_*) the
 * client sends until one chooses an export (NBD_OPT_EXPORT_NAME or NBD_OPT_GO) or it aborts.
 * Every message is read and written within the handshake timeout; options longer than
 * {@link NbdProtocol#MAX_OPTION_LENGTH}, bad magic numbers and unknown client flags end the
 * connection.
 */
final class NbdHandshake {
    /** What the handshake agreed on for the transmission phase. */
    record Negotiated(NbdExport export, boolean structured, boolean allocationContext, boolean readOnly) { }

    private final NbdServer server;
    private final NbdSocket socket;
    private final String peer;
    private final NbdTls tlsMode;
    /** Who the client is for the access rules once TLS is on: its certificate, or its pre-shared key's identity; else null. */
    private ClientIdentity identity;

    private boolean noZeroes;
    private boolean structured;
    private NbdExport export;
    /** The export whose base:allocation context NBD_OPT_SET_META_CONTEXT selected, or null. */
    private String allocationContextExport;
    /** Whether base:allocation is selected for the transmission phase (NBD_CMD_BLOCK_STATUS allowed). */
    private boolean allocationContext;

    NbdHandshake(NbdServer server, NbdSocket socket, String peer) {
        this.server = server;
        this.socket = socket;
        this.peer = peer;
        this.tlsMode = server.options().tls;
    }

    /** Runs the handshake on an open socket; what it agreed on, or null when the client aborted it. */
    Negotiated negotiate() throws IOException {
        return haggle() ? new Negotiated(export, structured, allocationContext, grant(export)
                == AccessRules.Grant.READ_ONLY) : null;
    }

    /** Option haggling; true when an export was chosen and transmission begins. */
    private boolean haggle() throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(18);
        hello.putLong(NBDMAGIC).putLong(IHAVEOPT).putShort((short) (FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES)).flip();
        writeFully(hello);
        ByteBuffer cf = readFully(4);
        int clientFlags = cf.getInt();
        if ((clientFlags & ~(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) != 0) {
            throw new NbdProtocolException("unknown client flags 0x" + Integer.toHexString(clientFlags));
        }
        boolean fixed = (clientFlags & FLAG_C_FIXED_NEWSTYLE) != 0;
        noZeroes = (clientFlags & FLAG_C_NO_ZEROES) != 0;
        while (true) {
            ByteBuffer h = readFully(16);
            long magic = h.getLong();
            if (magic != IHAVEOPT) {
                throw new NbdProtocolException("bad option magic 0x" + Long.toHexString(magic));
            }
            int option = h.getInt();
            long length = Integer.toUnsignedLong(h.getInt());
            if (length > MAX_OPTION_LENGTH) {
                throw new NbdProtocolException("option " + option + " carries " + length + " bytes (limit "
                        + MAX_OPTION_LENGTH + ")");
            }
            ByteBuffer data = readFully((int) length);
            if (!fixed && option != OPT_EXPORT_NAME) {
                throw new NbdProtocolException("option " + option + " without fixed newstyle");
            }
            if (server.isClosing() && option != OPT_ABORT) {
                optionReply(option, REP_ERR_SHUTDOWN, "server is shutting down");
                continue;
            }
            if (tlsMode == NbdTls.REQUIRE && !socket.isTls() && option != OPT_STARTTLS && option != OPT_ABORT) {
                if (option == OPT_EXPORT_NAME) {
                    // no error reply exists for it: the session ends, nothing of an export was shown
                    throw new NbdProtocolException("NBD_OPT_EXPORT_NAME without TLS on a server that requires it");
                }
                server.log("nbd: " + peer + " option " + option + " refused: TLS required (NBD_OPT_STARTTLS first)");
                optionReply(option, REP_ERR_TLS_REQD, "TLS is required: send NBD_OPT_STARTTLS first");
                continue;
            }
            switch (option) {
                case OPT_EXPORT_NAME:
                    return exportName(data);
                case OPT_ABORT:
                    try {
                        optionReply(option, REP_ACK, (ByteBuffer) null);
                    } catch (IOException ignored) {
                        // the client may already be gone; it asked to end anyway
                    }
                    server.log("nbd: " + peer + " aborted the handshake");
                    return false;
                case OPT_LIST:
                    list(data);
                    break;
                case OPT_INFO:
                case OPT_GO:
                    if (infoOrGo(option, data)) {
                        return true;
                    }
                    break;
                case OPT_STRUCTURED_REPLY:
                    if (data.hasRemaining()) {
                        optionReply(option, REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                    } else {
                        structured = true;
                        optionReply(option, REP_ACK, (ByteBuffer) null);
                    }
                    break;
                case OPT_LIST_META_CONTEXT:
                case OPT_SET_META_CONTEXT:
                    metaContext(option, data);
                    break;
                case OPT_STARTTLS:
                    startTls(data);
                    break;
                default:
                    optionReply(option, REP_ERR_UNSUP, "option " + option + " is not supported");
                    break;
            }
        }
    }

    /**
     * A failed handshake's likely cause, said as what to change, for the failures the TLS engines
     * (BoringSSL's codes, the JDK's words) name in their own terms; other reasons as given.
     */
    static String tlsFailure(String m) {
        if (m == null) {
            return "no reason given";
        }
        String u = m.toUpperCase(java.util.Locale.ROOT).replace(' ', '_');
        if (u.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") || u.contains("EMPTY_CLIENT_CERTIFICATE_CHAIN")
                || u.contains("CERTIFICATE_REQUIRED")) {
            return "the client sent no certificate, and this server requires one (--tls-verify-client): give the "
                    + "client a certificate of --tls-ca's CA and its key (libnbd: tls-certificates=DIR holding "
                    + "client-cert.pem and client-key.pem; qemu: tls-creds-x509 with endpoint=client)";
        }
        if (u.contains("WRONG_VERSION_NUMBER") || u.contains("NOT_AN_SSL/TLS_RECORD")
                || u.contains("UNSUPPORTED_OR_UNRECOGNIZED_SSL_MESSAGE") || u.contains("HTTP_REQUEST")) {
            return "the client does not speak TLS after NBD_OPT_STARTTLS";
        }
        if (u.contains("CERTIFICATE_VERIFY_FAILED") || u.contains("PKIX_PATH") || u.contains("UNABLE_TO_FIND_VALID")) {
            return "the client's certificate does not chain to --tls-ca";
        }
        return m;
    }

    /**
     * NBD_OPT_STARTTLS: acknowledged in plaintext, then the TLS handshake (within the handshake
     * timeout); option haggling goes on inside TLS with what was agreed before forgotten, as the
     * protocol asks (a man in the middle could have chosen it).
     */
    private void startTls(ByteBuffer data) throws IOException {
        if (tlsMode == NbdTls.OFF) {
            optionReply(OPT_STARTTLS, REP_ERR_UNSUP, "TLS is not enabled on this server");
            return;
        }
        if (socket.isTls()) {
            optionReply(OPT_STARTTLS, REP_ERR_INVALID, "TLS is already on");
            return;
        }
        if (data.hasRemaining()) {
            optionReply(OPT_STARTTLS, REP_ERR_INVALID, "NBD_OPT_STARTTLS takes no data");
            return;
        }
        optionReply(OPT_STARTTLS, REP_ACK, (ByteBuffer) null);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(server.options().handshakeTimeoutMillis);
        TlsStream s;
        try {
            s = socket.startTls(server.options()::serverTls, op -> awaitReady(op, deadline));
        } catch (SSLException e) {
            throw new NbdProtocolException("TLS handshake failed: " + tlsFailure(e.getMessage()));
        } catch (NbdProtocolException e) {
            throw new NbdProtocolException("TLS " + e.getMessage());
        }
        structured = false;
        allocationContextExport = null;
        String who = s.peerIdentity();
        identity = ClientIdentity.of(s);
        server.log("nbd: " + peer + " TLS " + s.protocol() + " " + s.cipherSuite()
                + (who == null ? "" : (s.peerIdentityIsPsk() ? ", PSK identity " : ", client ") + identity));
    }

    private boolean exportName(ByteBuffer data) throws IOException {
        String name = utf8(data, data.remaining());
        NbdExport e = visible(server.export(name));
        if (e == null) {
            // NBD_OPT_EXPORT_NAME has no error reply: the only answer is to end the session.
            throw new NbdProtocolException("no export named '" + name + "' (NBD_OPT_EXPORT_NAME)");
        }
        ByteBuffer b = ByteBuffer.allocate(noZeroes ? 10 : 134);
        b.putLong(e.size).putShort((short) transmissionFlags(e));
        b.position(b.limit()).flip();
        writeFully(b);
        chosen(e);
        return true;
    }

    /** The export of the transmission phase; a meta context selected for another export is dropped. */
    private void chosen(NbdExport e) {
        export = e;
        allocationContext = allocationContextExport != null && allocationContextExport.equals(e.name);
    }

    /**
     * NBD_OPT_LIST_META_CONTEXT and NBD_OPT_SET_META_CONTEXT: the export name, then the queries.
     * The only context is {@code base:allocation}; LIST with no query, or with {@code base:}, names
     * it. SET selects it when asked for by name (and replaces any earlier selection), and needs
     * structured replies first.
     */
    private void metaContext(int option, ByteBuffer data) throws IOException {
        boolean set = option == OPT_SET_META_CONTEXT;
        if (set && !structured) {
            optionReply(option, REP_ERR_INVALID, "NBD_OPT_SET_META_CONTEXT needs NBD_OPT_STRUCTURED_REPLY first");
            return;
        }
        if (data.remaining() < 8) {
            optionReply(option, REP_ERR_INVALID, "option data of " + data.remaining() + " bytes is too short");
            return;
        }
        long nameLength = Integer.toUnsignedLong(data.getInt());
        if (nameLength > data.remaining() - 4) {
            optionReply(option, REP_ERR_INVALID, "name length " + nameLength + " exceeds the option data");
            return;
        }
        String name = utf8(data, (int) nameLength);
        long queries = Integer.toUnsignedLong(data.getInt());
        boolean match = false;
        for (long q = 0; q < queries; q++) {
            if (data.remaining() < 4) {
                optionReply(option, REP_ERR_INVALID, queries + " queries do not fit the option data");
                return;
            }
            long len = Integer.toUnsignedLong(data.getInt());
            if (len > data.remaining()) {
                optionReply(option, REP_ERR_INVALID, "query length " + len + " exceeds the option data");
                return;
            }
            String query = utf8(data, (int) len);
            match |= query.equals(BASE_ALLOCATION) || (!set && query.equals("base:"));
        }
        if (data.hasRemaining()) {
            optionReply(option, REP_ERR_INVALID, data.remaining() + " bytes after the last query");
            return;
        }
        NbdExport e = visible(server.export(name));
        if (e == null) {
            optionReply(option, REP_ERR_UNKNOWN, "no export named '" + name + "'");
            return;
        }
        boolean selected = match || (!set && queries == 0);
        if (set) {
            allocationContextExport = match ? e.name : null;
        }
        if (selected) {
            byte[] n = BASE_ALLOCATION.getBytes(StandardCharsets.US_ASCII);
            ByteBuffer b = ByteBuffer.allocate(4 + n.length);
            b.putInt(BASE_ALLOCATION_ID).put(n).flip();
            optionReply(option, REP_META_CONTEXT, b);
        }
        optionReply(option, REP_ACK, (ByteBuffer) null);
    }

    private void list(ByteBuffer data) throws IOException {
        if (data.hasRemaining()) {
            optionReply(OPT_LIST, REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
            return;
        }
        List<VolumeInfo> vols = server.volumes();
        for (VolumeInfo v : vols) {
            if (grant(v.name()) == AccessRules.Grant.NONE) {
                continue; // not this client's: not even its name is shown
            }
            byte[] name = v.name().getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(4 + name.length);
            b.putInt(name.length).put(name).flip();
            optionReply(OPT_LIST, REP_SERVER, b);
        }
        optionReply(OPT_LIST, REP_ACK, (ByteBuffer) null);
    }

    /** NBD_OPT_INFO or NBD_OPT_GO; true when GO succeeded. */
    private boolean infoOrGo(int option, ByteBuffer data) throws IOException {
        if (data.remaining() < 6) {
            optionReply(option, REP_ERR_INVALID, "option data of " + data.remaining() + " bytes is too short");
            return false;
        }
        long nameLength = Integer.toUnsignedLong(data.getInt());
        if (nameLength > data.remaining() - 2) {
            optionReply(option, REP_ERR_INVALID, "name length " + nameLength + " exceeds the option data");
            return false;
        }
        String name = utf8(data, (int) nameLength);
        int requests = Short.toUnsignedInt(data.getShort());
        if (data.remaining() != 2 * requests) {
            optionReply(option, REP_ERR_INVALID, requests + " information requests need " + 2 * requests
                    + " bytes, the option has " + data.remaining());
            return false;
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int info = Short.toUnsignedInt(data.getShort());
            wantName |= info == INFO_NAME;
            wantDescription |= info == INFO_DESCRIPTION;
        }
        NbdExport e = visible(server.export(name));
        if (e == null) {
            optionReply(option, REP_ERR_UNKNOWN, name.isEmpty()
                    ? "no default export: there is not exactly one volume; name one (NBD_OPT_LIST)"
                    : "no export named '" + name + "'");
            return false;
        }
        ByteBuffer ex = ByteBuffer.allocate(12);
        ex.putShort((short) INFO_EXPORT).putLong(e.size).putShort((short) transmissionFlags(e)).flip();
        optionReply(option, REP_INFO, ex);
        if (wantName) {
            optionReply(option, REP_INFO, infoString(INFO_NAME, e.name));
        }
        if (wantDescription) {
            optionReply(option, REP_INFO, infoString(INFO_DESCRIPTION, "pistore volume " + e.description()));
        }
        // Always sent: a client that did not ask may ignore it; the constraints are the defaults'
        // (minimum 1) except the maximum payload, and larger writes are refused cleanly.
        ByteBuffer bs = ByteBuffer.allocate(14);
        bs.putShort((short) INFO_BLOCK_SIZE).putInt(1).putInt(Math.max(512, e.dataSize)).putInt(e.maxPayload).flip();
        optionReply(option, REP_INFO, bs);
        optionReply(option, REP_ACK, (ByteBuffer) null);
        if (option == OPT_GO) {
            chosen(e);
            return true;
        }
        return false;
    }

    private static ByteBuffer infoString(int type, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(b.length, MAX_STRING);
        ByteBuffer buf = ByteBuffer.allocate(2 + n);
        buf.putShort((short) type).put(b, 0, n).flip();
        return buf;
    }

    /** What the access file grants this client for {@code export} (everything without one). */
    private AccessRules.Grant grant(String export) {
        AccessRules a = server.options().access;
        return a == null ? AccessRules.Grant.READ_WRITE : a.grant(identity, export);
    }

    /** As {@link #grant(String)}, and read-only where the target lets this server only read the volume. */
    private AccessRules.Grant grant(NbdExport e) {
        AccessRules.Grant g = grant(e.name);
        return g == AccessRules.Grant.READ_WRITE && e.readOnly() ? AccessRules.Grant.READ_ONLY : g;
    }

    /** The export if this client may see it, else null (refused as unknown, as if it did not exist). */
    private NbdExport visible(NbdExport e) {
        if (e == null) {
            return null;
        }
        if (grant(e.name) == AccessRules.Grant.NONE) {
            server.log("nbd: " + peer + " export " + e.name + " refused: not granted to "
                    + (identity == null ? "a client without a certificate" : identity));
            return null;
        }
        return e;
    }

    private int transmissionFlags(NbdExport e) {
        int f = TF_HAS_FLAGS | TF_SEND_FLUSH | TF_SEND_FUA | TF_SEND_TRIM | TF_SEND_WRITE_ZEROES | TF_CAN_MULTI_CONN;
        if (grant(e) == AccessRules.Grant.READ_ONLY) {
            f |= TF_READ_ONLY;
        }
        if (structured) {
            f |= TF_SEND_DF;
        }
        return f;
    }

    private void optionReply(int option, int type, String message) throws IOException {
        ByteBuffer data = null;
        if (message != null) {
            data = ByteBuffer.wrap(NbdProtocol.message(message));
        }
        optionReply(option, type, data);
    }

    private void optionReply(int option, int type, ByteBuffer data) throws IOException {
        int len = data == null ? 0 : data.remaining();
        ByteBuffer h = ByteBuffer.allocate(20);
        h.putLong(OPTION_REPLY_MAGIC).putInt(option).putInt(type).putInt(len).flip();
        if (data == null) {
            writeFully(h);
        } else {
            writeFully(h, data);
        }
    }

    private static String utf8(ByteBuffer b, int n) {
        byte[] a = new byte[n];
        b.get(a);
        return new String(a, StandardCharsets.UTF_8);
    }

    private ByteBuffer readFully(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(server.options().handshakeTimeoutMillis);
        while (b.hasRemaining()) {
            int r = socket.read(b);
            if (r < 0) {
                throw new EOFException();
            }
            if (r == 0) {
                awaitReady(SelectionKey.OP_READ, deadline);
            }
        }
        return b.flip();
    }

    private void writeFully(ByteBuffer... bufs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(server.options().handshakeTimeoutMillis);
        while (remaining(bufs) > 0 || socket.unsentBytes() > 0) {
            if (socket.write(bufs) == 0 && !socket.flush()) {
                awaitReady(SelectionKey.OP_WRITE, deadline);
            }
        }
    }

    private void awaitReady(int op, long deadline) throws IOException {
        if (socket.isClosed()) {
            throw new IOException("connection closed");
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (ms <= 0) {
            throw new NbdProtocolException("handshake timed out after "
                    + server.options().handshakeTimeoutMillis + " ms");
        }
        socket.awaitReady(op, ms);
        if (socket.isClosed()) {
            throw new IOException("connection closed");
        }
    }

    private static long remaining(ByteBuffer[] bufs) {
        long n = 0;
        for (ByteBuffer b : bufs) {
            n += b.remaining();
        }
        return n;
    }
}
