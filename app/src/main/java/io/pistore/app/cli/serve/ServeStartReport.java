package io.pistore.app.cli.serve;

import io.pistore.app.cli.TlsLine;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.integrity.GuardPath;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.server.PistoreServer;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code serve} prints once its server has started: what listens, where, over which volumes,
 * on stdout; on stderr one warning line for each listener that carries volume data in plaintext
 * and can be reached from other machines.
 *
 * @param settings the transport settings the server was built with
 * @param nbd      the NBD options, resolved
 * @param target   the remote target whose volumes NBD exports, or null
 * @param dataDir  the data directory served, or null for memory volumes
 * @param iscsi    what the iSCSI listener loaded (CHAP, access rules), as {@link IscsiServeOptions#described}
 */
record ServeStartReport(PrintWriter out, PrintWriter err, TransportOptions settings, ServeNbdOptions nbd,
                        String target, Path dataDir, String iscsi) {

    /** The start-up lines of {@code server}, whose transport listener (or remote target) is {@code p}'s. */
    void print(PistoreServer server, BlockTransportProvider p) {
        if (server.metrics() != null) {
            out.println("pistore serve: metrics at " + server.metrics().url());
            out.flush();
            warnIfExposed("metrics", server.metrics().address(), server.metrics().tls(),
                    "reads every volume's name and figures");
        }
        VolumeStore store = server.volumes();
        if (store == null) {
            HostConnection hc = server.nbdConnection();
            out.println("pistore serve: " + hc.volumes().size() + " volume(s) of target " + target + " over "
                    + p.name());
            out.println("  " + GuardPath.describe());
            printNbd(server, "target " + target + " over " + p.name());
            return;
        }
        if (server.controlSocket() == null && server.controlProblem() != null) {
            out.println("pistore serve: no live volume changes: " + server.controlProblem());
        }
        ReplicaNode node = server.replica();
        if (node != null) {
            printReplicated(node, server.replicatedVolumes());
        }
        String from = dataDir != null ? "from " + dataDir : "in memory";
        if (!server.listeners().isEmpty()) {
            TargetListener l = server.listeners().get(0).listener();
            out.println("pistore serve: " + store.list().size() + " volume(s) " + from + " on "
                    + StartupLines.where(p.name(), l.address()));
            if (!settings.isEmpty()) {
                out.println("  transport options: " + settings);
            }
            String tlsLine = p.name().equals("tcp") ? TlsLine.tcp(settings) : null;
            if (tlsLine != null) {
                out.println("  " + tlsLine);
            }
            if (!p.name().equals(LocalTransportProvider.NAME)) {
                warnIfExposed(p.name() + " transport", listenerAddress(l),
                        "true".equalsIgnoreCase(settings.asMap().get(p.name() + ".tls")));
            }
            TransportCapabilities caps = p.capabilities(settings);
            if (!caps.hardwareGuards().isEmpty()) {
                out.println("  " + StartupLines.offload(p.name(), caps.hardwareGuards()));
            }
        } else {
            out.println("pistore serve: " + store.list().size() + " volume(s) " + from);
        }
        out.println("  " + GuardPath.describe());
        if (server.controlSocket() != null) {
            out.println("  volumes change live: pistore volume create|resize|delete --data " + dataDir);
        }
        for (Volume v : store.list()) {
            out.println("  " + v.name() + " " + v.blockCount() + " blocks " + v.format());
        }
        if (server.nbd() != null) {
            printNbd(server, "in-process (local transport)");
        }
        if (server.iscsi() != null) {
            InetSocketAddress a = server.iscsi().address();
            out.println("pistore serve: iSCSI on " + a.getAddress().getHostAddress() + ":" + a.getPort() + ", targets "
                    + IscsiServer.IQN_PREFIX + "VOLUME, LUN 0" + iscsi);
        }
    }

    /** The replica peer and the replicated volumes it serves here, with a warning where a peer list misnames it. */
    private void printReplicated(ReplicaNode node, List<ReplicatedVolume> volumes) {
        out.println("pistore serve: replica " + node.id() + " on " + node.peer().getAddress() + ", "
                + node.volumeNames().size() + " replicated volume(s)");
        String here = node.peer().getAddress();
        for (ReplicatedVolume v : volumes) {
            String name = v.name();
            out.println("  " + name + " replicated on " + ReplicaPeers.describe(v.group().getPeers().stream().toList()));
            v.group().getPeers().stream().filter(m -> m.getId().toString().equals(node.id())).findFirst()
                    .filter(m -> !m.getAddress().equals(here))
                    .ifPresent(m -> out.println("  warning: the peers of " + name + " name " + node.id() + " at "
                            + m.getAddress() + ", but it listens on " + here + ": they cannot reach it"));
        }
    }

    private void printNbd(PistoreServer s, String via) {
        NbdServer server = s.nbd();
        HostConnection hc = s.nbdConnection();
        boolean everywhere = server.address().getAddress().isAnyLocalAddress();
        // A wildcard address is no address a client can use: name loopback, which reaches it from here.
        String host = everywhere ? "127.0.0.1" : server.address().getAddress().getHostAddress();
        String hostPort = (host.contains(":") ? "[" + host + "]" : host) + ":" + server.address().getPort();
        NbdTls mode = nbd.mode();
        out.println("pistore serve: NBD on " + (everywhere ? "every address, port " + server.address().getPort()
                : hostPort) + ", " + via + ", " + hc.volumes().size() + " export(s)" + nbd.describe());
        String scheme = mode == NbdTls.REQUIRE ? "nbds" : "nbd";
        for (VolumeInfo v : hc.volumes()) {
            out.println("  " + scheme + "://" + hostPort + "/" + v.name() + "  " + v.dataBytes() + " bytes  "
                    + v.format());
        }
        out.flush();
        warnIfExposed("NBD", server.address(), mode == NbdTls.REQUIRE);
    }

    /** One warning line on stderr when a listener reachable from other machines reads and writes volumes in plaintext. */
    private void warnIfExposed(String what, InetSocketAddress bound, boolean encrypted) {
        warnIfExposed(what, bound, encrypted, "reads and writes every volume");
    }

    /** As above, saying what anyone who reaches the listener can do ({@code exposes}). */
    private void warnIfExposed(String what, InetSocketAddress bound, boolean encrypted, String exposes) {
        if (encrypted || bound.getAddress().isLoopbackAddress()) {
            return;
        }
        String host = bound.getAddress().getHostAddress();
        err.println("pistore serve: warning: " + what + " on "
                + (bound.getAddress().isAnyLocalAddress() ? "every address" : host) + " port " + bound.getPort()
                + " accepts clients without TLS: anyone who can reach it " + exposes
                + " (see docs/SECURITY.md)");
        err.flush();
    }

    /** The listener's address as a socket address (its string is HOST:PORT for the network transports). */
    private static InetSocketAddress listenerAddress(TargetListener l) {
        try {
            return NbdServer.parseAddress(l.address());
        } catch (IllegalArgumentException e) {
            return new InetSocketAddress("127.0.0.1", 0); // not a network address: nothing exposed
        }
    }
}
