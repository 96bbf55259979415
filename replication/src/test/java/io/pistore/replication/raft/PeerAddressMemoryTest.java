package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.replication.ReplicaPeers;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

class PeerAddressMemoryTest {
    @Test
    void aNameKeepsTheAddressItWasFirstSeenAtAndTheRecordTravelsWhole() {
        PeerAddressMemory m = new PeerAddressMemory();
        m.saw(ReplicaPeers.parse("n1=127.0.0.1:9871,n2=127.0.0.1:9872"));
        m.saw(ReplicaPeers.parse("n1=127.0.0.1:9999,n4=10.0.0.4:9874"));
        Map<String, String> back = PeerAddressMemory.decode(m.encode().getContent());
        assertEquals(Map.of("n1", "127.0.0.1:9871", "n2", "127.0.0.1:9872", "n4", "10.0.0.4:9874"), back);
        assertEquals(Map.of(), PeerAddressMemory.decode(new PeerAddressMemory().encode().getContent()));
    }

    @Test
    void aLineWithoutNameAndAddressIsRefusedWithIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PeerAddressMemory.decode(ByteString.copyFrom("n1 127.0.0.1:1\nn2\n", StandardCharsets.UTF_8)));
        assertEquals("peer address line 'n2' is not 'name address'", e.getMessage());
    }
}
