package io.pistore.it.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link PeerFaultMatrix} over rdma (the soft NIC across processes): an rdma host on n1 (a follower,
 * forwarding; left out when n1 is the victim: an rdma host fails what its lost connection had in
 * flight) and an NBD gateway over rdma attached to the victim itself (first of its list), which
 * sends again what the lost connection failed.
 */
class RdmaPeerFaultMatrixTest extends PeerFaultMatrix {
    private io.pistore.engine.BlockDevice onN1;

    @Override
    String transport() {
        return "rdma";
    }

    @Override
    List<MixedClient> clients(int victim, long lba, long seed) throws Exception {
        if (onN1 == null) {
            onN1 = host(cluster.targetsFrom(1), Map.of());
        }
        List<MixedClient> c = new ArrayList<>();
        if (victim != 1) {
            c.add(new MixedClient("rdma host on n1", onN1, lba, 64, 2, seed));
        }
        return c;
    }

    @Override
    String[] gatewayFor(int victim) {
        return new String[] {cluster.targetsFrom(victim)};
    }
}
