package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.ratis.proto.RaftProtos.StateMachineEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** Ratis names an entry in its messages as the state machine says: by its sizes, not its bytes. */
class EntryStringTest {
    @Test
    void anEntryIsNamedByItsSizes() {
        StateMachineLogEntryProto inside = StateMachineLogEntryProto.newBuilder()
                .setLogData(ByteString.copyFrom(new byte[4160])).build();
        assertEquals("pistore commands, 4160 bytes", VolumeStateMachine.entryString(inside));
        StateMachineLogEntryProto beside = StateMachineLogEntryProto.newBuilder()
                .setLogData(ByteString.copyFrom(new byte[72]))
                .setStateMachineEntry(StateMachineEntryProto.newBuilder()
                        .setStateMachineData(ByteString.copyFrom(new byte[4104])))
                .build();
        assertEquals("pistore commands, 72 bytes and 4104 beside the log", VolumeStateMachine.entryString(beside));
    }
}
