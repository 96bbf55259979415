package io.pistore.it.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link PeerFaultMatrix} over rdma (the soft NIC across processes): an rdma host following path
 * states (so on the leader: the leader's kill is of the peer it uses), an rdma host without them on
 * n1 (a follower, reading its own replica after the leader's read index; left out when n1 is the
 * victim: without path states an rdma host fails what its lost connection had in flight) and an NBD
 * gateway over rdma without path states attached to the victim itself (first of its list), which
 * sends again what the lost connection failed.
 */
class RdmaPeerFaultMatrixTest extends PeerFaultMatrix {
    private io.pistore.engine.BlockDevice following;
    private io.pistore.engine.BlockDevice onN1;

    @Override
    String transport() {
        return "rdma";
    }

    @Override
    List<MixedClient> clients(int victim, long lba, long seed) throws Exception {
        if (following == null) {
            following = host(cluster.targets, Map.of());
            onN1 = host(cluster.targetsFrom(1), Map.of("rdma.pathStates", "false"));
        }
        List<MixedClient> c = new ArrayList<>();
        c.add(new MixedClient("rdma host (path states)", following, lba, 64, 2, seed));
        if (victim != 1) {
            c.add(new MixedClient("rdma host on n1", onN1, lba + 64, 64, 2, seed + 7));
        }
        return c;
    }

    @Override
    String[] gatewayFor(int victim) {
        return new String[] {cluster.targetsFrom(victim), "rdma.pathStates=false"};
    }
}
