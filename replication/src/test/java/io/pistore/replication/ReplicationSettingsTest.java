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
