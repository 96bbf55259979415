package io.pistore.it.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link PeerFaultMatrix} over tcp: a host following path states (so on the leader: the leader's
 * kill is of the peer it uses), a host without them on n1 (a follower, forwarding; left out when n1
 * is the victim, as it does not send again what the lost connection failed) and the NBD gateway,
 * following path states, or without them on n1 when n1 is the victim.
 */
class PeerFaultMatrixTest extends PeerFaultMatrix {
    private io.pistore.engine.BlockDevice following;
    private io.pistore.engine.BlockDevice onN1;

    @Override
    String transport() {
        return "tcp";
    }

    @Override
    List<MixedClient> clients(int victim, long lba, long seed) throws Exception {
        if (following == null) {
            following = host(cluster.targets, Map.of());
            onN1 = host(cluster.targetsFrom(1), Map.of("tcp.pathStates", "false"));
        }
        List<MixedClient> c = new ArrayList<>();
        c.add(new MixedClient("tcp host (path states)", following, lba, 64, 2, seed));
        if (victim != 1) {
            c.add(new MixedClient("tcp host on n1", onN1, lba + 64, 64, 2, seed + 7));
        }
        return c;
    }

    @Override
    String[] gatewayFor(int victim) {
        return victim == 1 ? new String[] {cluster.targetsFrom(1), "tcp.pathStates=false"}
                : new String[] {cluster.targets};
    }
}
