package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Properties;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;

/** Ratis settings given as {@code pistore.ratis.KEY} system properties reach Ratis over pistore's own. */
class ReplicationSettingsTest {
    @Test
    void theLogsSegmentsAreSmallWhereTheyHoldHeadersOnlyAndLargeWhereTheyHoldTheData(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path dir) {
        ReplicationSettings beside = ReplicationSettings.defaults().withDataBeside(ReplicationSettings.DataBeside.ALWAYS);
        ReplicationSettings inside = ReplicationSettings.defaults().withDataBeside(ReplicationSettings.DataBeside.NEVER);
        assertEquals(64 << 10, org.apache.ratis.server.RaftServerConfigKeys.Log.segmentSizeMax(
                beside.server("127.0.0.1", 0, dir)).getSize());
        long large = org.apache.ratis.server.RaftServerConfigKeys.Log.segmentSizeMax(
                inside.server("127.0.0.1", 0, dir)).getSize();
        org.junit.jupiter.api.Assertions.assertTrue(large >= 16 << 20, "segments of the largest entries: " + large);
        assertEquals(!io.pistore.engine.volume.file.FileVolume.inMemory(dir), !ReplicationSettings.defaults().dataBesideIn(dir),
                "auto: beside only in memory");
        assertEquals(4 << 10, org.apache.ratis.server.RaftServerConfigKeys.Log.segmentSizeMax(
                inside.withLogSegmentBytes(4 << 10).server("127.0.0.1", 0, dir)).getSize(), "a size set is kept");
    }

    @Test
    void thePeersTalkOverPistoresOwnRpcByDefaultGrpcByChoiceAndAnUnknownOneIsRefusedByName() {
        String before = System.getProperty(ReplicationSettings.PEER_RPC_PROPERTY);
        try {
            System.clearProperty(ReplicationSettings.PEER_RPC_PROPERTY);
            assertEquals(io.pistore.replication.rpc.PeerRpcType.INSTANCE.name(),
                    org.apache.ratis.RaftConfigKeys.Rpc.type(ReplicationSettings.defaults().client(), null).name());
            System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, "grpc");
            assertEquals(org.apache.ratis.rpc.SupportedRpcType.GRPC.name(),
                    org.apache.ratis.RaftConfigKeys.Rpc.type(ReplicationSettings.defaults().client(), null).name());
            System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, "netty");
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> ReplicationSettings.defaults().client());
            assertEquals("pistore.replication.rpc is pistore (the default) or grpc, not 'netty'", e.getMessage());
        } finally {
            if (before == null) {
                System.clearProperty(ReplicationSettings.PEER_RPC_PROPERTY);
            } else {
                System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, before);
            }
        }
    }

    @Test
    void whereTheDataGoesIsAutoByDefaultAndAnUnknownValueIsRefusedByName() {
        assertEquals(ReplicationSettings.DataBeside.AUTO, ReplicationSettings.defaults().dataBeside());
        assertEquals(ReplicationSettings.DataBeside.ALWAYS, ReplicationSettings.DataBeside.parse(" Always"));
        assertEquals(ReplicationSettings.DataBeside.NEVER, ReplicationSettings.defaults()
                .withDataBeside(ReplicationSettings.DataBeside.NEVER).withPurgeGap(3).dataBeside(), "kept through other changes");
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ReplicationSettings.DataBeside.parse("sometimes"));
        assertEquals("pistore.replication.dataBeside must be auto, always or never, not 'sometimes'", e.getMessage());
    }

    @Test
    void aPrefixedPropertyOverridesPistoresOwnSettingAndOthersAreLeftAlone() {
        Properties system = new Properties();
        system.setProperty("pistore.ratis.raft.server.log.appender.wait-time.min", "3ms");
        system.setProperty("pistore.ratis.raft.server.log.segment.size.max", "12MB");
        system.setProperty("pistore.ratis.", "no key");
        system.setProperty("raft.server.log.force.sync.num", "1");
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, org.apache.ratis.util.SizeInBytes.valueOf(22 << 20));
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, TimeDuration.ZERO);
        ReplicationSettings.withRatisOverrides(p, system);
        assertEquals(3,
                RaftServerConfigKeys.Log.Appender.waitTimeMin(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS));
        assertEquals(12L << 20, RaftServerConfigKeys.Log.segmentSizeMax(p).getSize());
        assertNull(p.get("raft.server.log.force.sync.num"), "only the prefixed properties are Ratis's");
        assertNull(p.get(""));
    }

    @Test
    void anAppenderSendsANewEntryAtOnce() {
        RaftProperties p = ReplicationSettings.defaults().server("127.0.0.1", 0, java.nio.file.Path.of("unused"));
        assertEquals(0, RaftServerConfigKeys.Log.Appender.waitTimeMin(p).toLong(java.util.concurrent.TimeUnit.NANOSECONDS),
                "the group commit gathers the entries; Ratis's 1 ms wait between appends delayed each one");
    }

    @Test
    void aLogSegmentIsFilledWithZerosAtMost64KiBAhead() {
        RaftProperties p = ReplicationSettings.defaults().server("127.0.0.1", 0, java.nio.file.Path.of("unused"));
        assertEquals(64L << 10, RaftServerConfigKeys.Log.preallocatedSize(p).getSize(),
                "Ratis's 4 MiB of zeros ahead reached a disk before the entries overwrote them");
    }

    @Test
    void theServersPropertiesCarryTheOverride() {
        String key = ReplicationSettings.RATIS_PROPERTY_PREFIX + "raft.server.log.force.sync.num";
        String before = System.getProperty(key);
        System.setProperty(key, "7");
        try {
            RaftProperties p = ReplicationSettings.defaults().server("127.0.0.1", 0, java.nio.file.Path.of("unused"));
            assertEquals(7, RaftServerConfigKeys.Log.forceSyncNum(p));
        } finally {
            if (before == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, before);
            }
        }
    }
}
