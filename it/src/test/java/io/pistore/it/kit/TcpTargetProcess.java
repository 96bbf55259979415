package io.pistore.it.kit;

import io.pistore.engine.Transports;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.TargetListener;

/**
 * A kit target in a process of its own (tcp or rdma): the kit's volumes in memory, served on the given transport
 * at 127.0.0.1:0. Prints {@code listening ADDRESS}, then serves until its standard input closes.
 */
public final class TcpTargetProcess {
    private TcpTargetProcess() {
    }

    public static void main(String[] args) throws Exception {
        String transport = args.length > 0 ? args[0] : "tcp";
        try (VolumeStore store = TransportCompatibilityKit.kitStore();
             BlockTransport t = Transports.find(transport).create();
             TargetListener l = t.listen("127.0.0.1:0", new TargetService(store))) {
            System.out.println("listening " + l.address());
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the parent closes our stdin (or dies)
            }
        }
    }
}
