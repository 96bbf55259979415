package io.pistore.it.kit;

import io.pistore.server.PistoreServer;

/**
 * A kit target in a process of its own (tcp or rdma): the kit's volumes in memory, served on the given transport
 * at 127.0.0.1:0. Prints {@code listening ADDRESS}, then serves until its standard input closes.
 */
public final class TcpTargetProcess {
    private TcpTargetProcess() {
    }

    public static void main(String[] args) throws Exception {
        String transport = args.length > 0 ? args[0] : "tcp";
        try (PistoreServer server = PistoreServer.builder().volumes(TransportCompatibilityKit.kitStore())
                .listen(transport, "127.0.0.1:0").build().start()) {
            System.out.println("listening " + server.listeners().get(0).address());
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the parent closes our stdin (or dies)
            }
        }
    }
}
