package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.raft.ApplyOutcome;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.testkit.Eventually;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.ReadIndexReplyProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract {@link RatisInternals} relies on, against the Ratis on the class path: its version is
 * the one the internals were checked against, and a running division answers the client and server
 * protocols on the calling thread, so a leader's entries and read-index questions take the in-process
 * path (a division that stopped answering them would leave every leader on the slower public path
 * without a failure anywhere else).
 */
class RatisInternalsContractTest {
    private static final String NAME = "contract";

    @TempDir
    Path dir;

    @Test
    void theRatisOnTheClassPathIsTheVersionTheInternalsWereCheckedAgainst() throws Exception {
        try (ReplicaNode node = ReplicaNode.start("a", "127.0.0.1", 0, dir, ThreePeers.SETTINGS, s -> { })) {
            node.createReplica(NAME, BlockFormat.of(512, 8), 16, List.of(node.peer()));
            RaftServer.Division d = node.server().getDivision(ReplicaPeers.groupId(NAME));
            assertEquals(RatisInternals.CHECKED_AGAINST, RatisInternals.version(d),
                    "Ratis changed: check RatisInternals's calls against the new version, then update CHECKED_AGAINST");
        }
    }

    @Test
    void aLeadingDivisionTakesEntriesAndAnswersItsReadIndexOnTheCallingThread() throws Exception {
        try (ReplicaNode node = ReplicaNode.start("a", "127.0.0.1", 0, dir, ThreePeers.SETTINGS, s -> { })) {
            node.createReplica(NAME, BlockFormat.of(512, 8), 16, List.of(node.peer()));
            RaftServer server = node.server();
            RaftServer.Division d = server.getDivision(ReplicaPeers.groupId(NAME));
            assertTrue(RatisInternals.submitsInProcess(d), "a division answers the client protocol");
            assertTrue(RatisInternals.readsIndexInProcess(d), "a division answers the server protocol");
            Eventually.await("the one peer to lead with an entry of its term committed", () -> {
                try {
                    return node.isReadyLeader(NAME);
                } catch (java.io.IOException e) {
                    return false;
                }
            });

            RaftClientRequest write = RaftClientRequest.newBuilder()
                    .setClientId(ClientId.randomId())
                    .setServerId(server.getId())
                    .setGroupId(d.getGroup().getGroupId())
                    .setCallId(1)
                    .setMessage(ReplicaCommand.plain(ReplicaCommand.Op.FLUSH, 0, 0, false))
                    .setType(RaftClientRequest.writeRequestType())
                    .build();
            RaftClientReply r = RatisInternals.submit(d, write).get(30, TimeUnit.SECONDS);
            assertTrue(r.isSuccess(), "the entry was committed: " + r.getException());
            assertTrue(ApplyOutcome.decode(r.getMessage().getContent()).isDone(), "and applied");
            long committed = r.getLogIndex();

            RaftClientRequest read = RaftClientRequest.newBuilder()
                    .setClientId(ClientId.randomId())
                    .setServerId(server.getId())
                    .setGroupId(d.getGroup().getGroupId())
                    .setCallId(1)
                    .setMessage(Message.EMPTY)
                    .setType(RaftClientRequest.readRequestType())
                    .build();
            ReadIndexReplyProto ri = RatisInternals.readIndex(server, d,
                    RatisInternals.readIndexRequest(d, server.getId(), read)).get(30, TimeUnit.SECONDS);
            assertTrue(ri.getServerReply().getSuccess(), "the leader gave its read index");
            assertTrue(ri.getReadIndex() >= committed,
                    "the read index " + ri.getReadIndex() + " covers the committed entry " + committed);
            assertNotNull(RatisInternals.version(d));
        }
    }
}
