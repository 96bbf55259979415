package io.pistore.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PathState;
import io.pistore.spi.PiDuty;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class PathStatePeerTest {
    @Test
    void eachPeerReportsItsStateFromTheLeaderIndexAndServesTheSharedVolume() {
        List<BlockRequest> executed = new ArrayList<>();
        List<VolumeInfo> volumes = List.of(new VolumeInfo("v", 8, BlockFormat.of(512, 8)));
        TargetHandler shared = new TargetHandler() {
            @Override
            public List<VolumeInfo> volumes() {
                return volumes;
            }

            @Override
            public void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done) {
                executed.add(request);
                done.accept(Completion.success());
            }
        };
        AtomicInteger leader = new AtomicInteger(1);
        PathStatePeer[] peers = {new PathStatePeer(shared, 0, leader), new PathStatePeer(shared, 1, leader)};
        assertEquals(PathState.NON_OPTIMIZED, peers[0].pathState("v"));
        assertEquals(PathState.OPTIMIZED, peers[1].pathState("v"));
        leader.set(0);
        assertEquals(PathState.OPTIMIZED, peers[0].pathState("v"));
        assertEquals(PathState.NON_OPTIMIZED, peers[1].pathState("v"));
        leader.set(PathStatePeer.NO_LEADER);
        assertEquals(PathState.INACCESSIBLE, peers[0].pathState("v"));
        assertEquals(PathState.INACCESSIBLE, peers[1].pathState("v"));

        assertSame(volumes, peers[1].volumes());
        BlockRequest r = BlockRequest.read("v", 0, 1, ScatterList.of(ByteBuffer.allocate(512)), null, null);
        List<Completion> answers = new ArrayList<>();
        peers[1].execute(r, PiDuty.NONE, answers::add);
        assertEquals(List.of(r), executed);
        assertEquals(1, answers.size());
        assertTrue(answers.get(0).isSuccess());
    }
}
