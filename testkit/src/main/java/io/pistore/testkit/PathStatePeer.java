package io.pistore.testkit;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PathState;
import io.pistore.spi.PiDuty;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One peer of a replicated volume as the path-state tests of any transport play it: several peers
 * serve one shared volume and the test says which of them leads. A peer reports
 * {@link PathState#OPTIMIZED} while the leader index is its own, {@link PathState#NON_OPTIMIZED}
 * while another peer leads and {@link PathState#INACCESSIBLE} while none does ({@link #NO_LEADER}).
 */
public final class PathStatePeer implements TargetHandler {
    /** The leader index that names no peer. */
    public static final int NO_LEADER = -1;

    private final TargetHandler volume;
    private final int index;
    private final AtomicInteger leader;

    /** Peer {@code index} serving {@code volume}; {@code leader} holds the index of the peer that leads. */
    public PathStatePeer(TargetHandler volume, int index, AtomicInteger leader) {
        this.volume = Objects.requireNonNull(volume, "volume");
        this.index = index;
        this.leader = Objects.requireNonNull(leader, "leader");
    }

    @Override
    public List<VolumeInfo> volumes() {
        return volume.volumes();
    }

    @Override
    public PathState pathState(String v) {
        int l = leader.get();
        return l == index ? PathState.OPTIMIZED : l == NO_LEADER ? PathState.INACCESSIBLE : PathState.NON_OPTIMIZED;
    }

    @Override
    public void execute(BlockRequest r, PiDuty duty, Consumer<Completion> done) {
        volume.execute(r, duty, done);
    }
}
