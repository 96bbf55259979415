package io.pistore.app.cli.serve;

import io.pistore.app.cli.CliException;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.PskKeys;
import io.pistore.security.tls.TlsContext;
import io.pistore.spi.TransportOptions;
import java.nio.file.Path;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * {@code serve}'s options of the NBD listener and of who may use the volumes ({@code --access} also
 * sets the tcp transport's rules): read from the command line, checked against the TLS material,
 * and turned into the {@link NbdServer.Options} the server starts NBD with.
 */
final class ServeNbdOptions {
    @Option(names = "--nbd-tls", paramLabel = "off|on|require",
            description = "NBD_OPT_STARTTLS: off refuses it, on lets each client choose, require refuses every "
                    + "export to a client that did not start TLS (default: require with --tls-cert or --tls-psk, "
                    + "else off; config key: nbd-tls).")
    String nbdTls;

    @Option(names = "--access", paramLabel = "FILE",
            description = "Which volumes each client may use, read-write or read-only, by its certificate (CN or "
                    + "subjectAltName; on NBD also its --tls-psk identity), on every listener: NBD (needs --tls-verify-client), the tcp transport "
                    + "(sets tcp.access: needs tcp.tls with tcp.tlsVerifyClient or tcp.tlsPsk) and iSCSI (by initiator name, CHAP name or "
                    + "@ADDRESS); docs/SECURITY.md; config key: access.")
    Path accessFile;

    @Option(names = "--nbd-access", paramLabel = "FILE",
            description = "As --access, for the NBD listener only; on NBD a client is also known by its pre-shared "
                    + "key identity with --tls-psk (config key: nbd-access).")
    Path nbdAccess;

    @Option(names = "--nbd-queues", paramLabel = "N", defaultValue = "1",
            description = "Queues of the NBD frontend's connection to the volumes (default: ${DEFAULT-VALUE}).")
    int queues;

    @Option(names = "--nbd-spin-us", paramLabel = "MICROS", defaultValue = "${sys:pistore.nbd.spinMicros:-100}",
            description = "Longest an NBD connection's thread polls for the client's next request before it "
                    + "blocks; adapts to the gaps between requests, yields the CPU, stops when idle; 0: never polls "
                    + "(default: ${DEFAULT-VALUE}, or -Dpistore.nbd.spinMicros).")
    long spinMicros;

    @Option(names = "--nbd-resend-ms", paramLabel = "MILLIS", defaultValue = "30000",
            description = "How long the NBD frontend sends a request again, every 100 ms, after its connection to "
                    + "the target was lost (until the host has reconnected, to the same or the next peer of "
                    + "--target) before the client gets EIO; flushes only with a list of peers; 0: EIO at once "
                    + "(default: ${DEFAULT-VALUE}).")
    long resendMillis;

    private TlsContext tlsContext;
    private PskKeys pskKeys;
    private NbdTls mode;
    private AccessRules access;

    /** The numbers' ranges, one usage line for the first out of range. */
    void checkRanges() {
        if (queues < 1 || queues > 64) {
            throw CliException.usage("--nbd-queues must be 1 to 64, not " + queues);
        }
        if (spinMicros < 0 || spinMicros > NbdServer.MAX_SPIN_MICROS) {
            throw CliException.usage("--nbd-spin-us must be 0 to " + NbdServer.MAX_SPIN_MICROS + ", not " + spinMicros);
        }
        if (resendMillis < 0 || resendMillis > 3_600_000) {
            throw CliException.usage("--nbd-resend-ms must be 0 to 3600000, not " + resendMillis);
        }
    }

    /**
     * {@code --access} for the transport's listener: the same file as tcp.access, when this serve
     * listens on tcp ({@code listens}: a serve that exports another target's volumes over NBD has no
     * transport listener).
     */
    TransportOptions withTcpAccess(TransportOptions s, boolean listens, String transport) {
        if (accessFile == null) {
            return s;
        }
        if (nbdAccess != null) {
            throw CliException.usage("--access and --nbd-access name the NBD rules twice; give one");
        }
        if (!listens) {
            return s;
        }
        if (transport.equals("rdma")) {
            throw CliException.usage("--access: the rdma transport has no access rules, so its listener would let "
                    + "every host use every volume; serve NBD and tcp only, or drop --access");
        }
        if (!transport.equals("tcp")) {
            return s;
        }
        if (s.asMap().containsKey("tcp.access")) {
            throw CliException.usage("--access and tcp.access name the tcp rules twice; give one");
        }
        return s.with("tcp.access", accessFile.toString());
    }

    /**
     * Loads the TLS material and the access rules, and checks them against each other; {@code nbd}:
     * whether this serve exports over NBD.
     */
    void resolve(TlsOptions tls, boolean nbd) {
        tlsContext = tls.serverContext();
        pskKeys = tls.pskKeys();
        mode = tlsMode();
        access = rules(nbd);
    }

    /** --nbd-tls, checked against the TLS material; require by default when there is a certificate. */
    private NbdTls tlsMode() {
        if (nbdTls == null) {
            return tlsContext != null || pskKeys != null ? NbdTls.REQUIRE : NbdTls.OFF;
        }
        NbdTls m;
        try {
            m = NbdTls.parse(nbdTls);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--nbd-tls must be off, on or require, not '" + nbdTls + "'");
        }
        if (m != NbdTls.OFF && tlsContext == null && pskKeys == null) {
            throw CliException.usage("--nbd-tls " + m + " needs --tls-cert and --tls-key, or --tls-psk");
        }
        return m;
    }

    /** --nbd-access or --access, read and checked against the TLS settings; null without them or --nbd. */
    private AccessRules rules(boolean nbd) {
        Path file = accessFileOfNbd();
        if (file == null || !nbd && nbdAccess == null) {
            return null;
        }
        String option = nbdAccess != null ? "--nbd-access" : "--access";
        if (mode != NbdTls.REQUIRE || pskKeys == null && !tlsContext.requiresClientCertificate()) {
            throw CliException.usage(option + " needs client certificates on NBD (--tls-cert, --tls-key, --tls-ca, "
                    + "--tls-verify-client) or pre-shared keys (--tls-psk), and --nbd-tls require");
        }
        try {
            return AccessRules.read(file);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }

    /** The access file of the NBD listener: --nbd-access, else --access. */
    private Path accessFileOfNbd() {
        return nbdAccess != null ? nbdAccess : accessFile;
    }

    /**
     * The NBD frontend's options (the server sets the largest transfer). Flushes are sent again
     * only to the peers of a replicated volume ({@code resendFlushes}: a list of peers): they
     * acknowledge a write once a quorum's log holds it, where a single restarted target may have lost it
     * ({@code singleRemoteTarget}: the first flush after a reconnect then fails, as docs/NBD.md says).
     */
    NbdServer.Options serverOptions(boolean resendFlushes, boolean singleRemoteTarget, Consumer<String> log,
                                    Consumer<String> debug) {
        NbdServer.Options o = new NbdServer.Options().spinMicros(spinMicros).resendMillis(resendMillis)
                .resendFlushes(resendFlushes).singleRemoteTarget(singleRemoteTarget);
        if (pskKeys != null) {
            o.tls(mode, pskKeys);
        } else {
            o.tls(mode, tlsContext);
        }
        return o.access(access).log(log).debugLog(debug);
    }

    /** The TLS mode of the NBD listener, once {@link #resolve resolved}. */
    NbdTls mode() {
        return mode;
    }

    /** ", TLS MODE (what)" and ", N access rule(s) from FILE" as they apply, for the NBD start-up line. */
    String describe() {
        return (mode == NbdTls.OFF ? "" : ", TLS " + mode + " ("
                + (pskKeys != null ? "pre-shared keys " + pskKeys : tlsContext) + ")")
                + (access == null ? "" : ", " + access.size() + " access rule(s) from " + accessFileOfNbd());
    }
}
