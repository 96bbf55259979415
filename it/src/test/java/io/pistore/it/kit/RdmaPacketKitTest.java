package io.pistore.it.kit;

import io.pistore.spi.TransportOptions;

/**
 * The rdma kit with the soft NIC's packet path forced in one JVM ({@code rdma.soft.fabric=packets}):
 * host and target devices exchange frames over a loopback socket as two processes do, each moving
 * bytes only from and to its own memory; the path assertions still demand integrity MRs for the
 * formats the signature engine carries.
 */
class RdmaPacketKitTest extends RdmaTransportKitTest {
    @Override
    protected TransportOptions transportOptions() {
        return super.transportOptions().with("rdma.soft.fabric", "packets");
    }
}
