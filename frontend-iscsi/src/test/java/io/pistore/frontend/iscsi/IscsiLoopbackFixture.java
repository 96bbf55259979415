package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target that the tests with the hand-written initiator ({@link IscsiTestInitiator}) log in to:
 * a volume store in a temporary directory and an {@link IscsiServer} on an ephemeral loopback port,
 * started before each test and closed after it; and the command blocks, status codes and checks
 * those tests share; the tests that drive libiscsi's tools use the target alone. The volumes live
 * in {@code volumes/} of the temporary directory, the rest of it is the test's; the server's log
 * lines are kept in {@link #log}. A test class creates its own volumes by overriding
 * {@link #createVolumes()} and may start the server with other options ({@link #options()}).
 */
abstract class IscsiLoopbackFixture {
    static final int GOOD = 0;
    static final int CHECK = 2;
    static final int CONFLICT = 0x18;
    static final int UNIT_ATTENTION = 0x06;

    @TempDir
    Path dir;

    VolumeStore store;
    IscsiServer server;
    /** The server's log lines. */
    final List<String> log = new CopyOnWriteArrayList<>();

    /** Creates the volumes the target serves: by default {@code v}, 64 blocks of 512 bytes with PI. */
    void createVolumes() throws IOException {
        store.create("v", BlockFormat.of(512, 8), 64);
    }

    /** Where the volume store lives. */
    Path volumesDirectory() {
        return dir.resolve("volumes");
    }

    /** The options the server starts with: the defaults, logging to {@link #log}, unless a test class says otherwise. */
    IscsiServer.Options options() {
        return new IscsiServer.Options().log(log::add);
    }

    @BeforeEach
    final void startTarget() throws IOException {
        store = VolumeStore.open(volumesDirectory());
        createVolumes();
        serve(options());
    }

    @AfterEach
    final void stopTarget() throws IOException {
        if (server != null) {
            server.close();
        }
        if (store != null) {
            store.close();
        }
        // a portal closed on purpose is no failed accept (the acceptor is joined by close)
        org.junit.jupiter.api.Assertions.assertTrue(log.stream().noneMatch(l -> l.contains("accept failed")),
                log::toString);
    }

    /** Closes the running server and serves the same store with {@code options} on a new port. */
    IscsiServer serve(IscsiServer.Options options) throws IOException {
        if (server != null) {
            server.close();
        }
        server = IscsiServer.serveLocal("127.0.0.1:0", new TargetService(store), options);
        return server;
    }

    /** Logs in to {@code volume} with the initiator's default name and the operational {@code keys}. */
    IscsiTestInitiator login(String volume, String... keys) throws IOException {
        return new IscsiTestInitiator(server.address(), IscsiServer.targetName(volume), keys);
    }

    /** Logs in to {@code volume} as {@code iqn.2026-12.io.pistore:<name>}: each name is an I_T nexus of its own. */
    IscsiTestInitiator loginAs(String name, String volume, String... keys) throws IOException {
        return loginAs(name, IscsiTestInitiator.DEFAULT_ISID, volume, keys);
    }

    /** As above, with the 48-bit {@code isid}: one initiator's sessions with other ISIDs are other I_T nexuses. */
    IscsiTestInitiator loginAs(String name, long isid, String volume, String... keys) throws IOException {
        String[] all = new String[keys.length + 2];
        all[0] = "InitiatorName";
        all[1] = "iqn.2026-12.io.pistore:" + name;
        System.arraycopy(keys, 0, all, 2, keys.length);
        return new IscsiTestInitiator(server.address(), IscsiServer.targetName(volume), isid, all);
    }

    /** A 16-byte buffer holding a 10-byte CDB: {@code op} with a 32-bit LBA and a 16-bit block count. */
    static byte[] cdb10(int op, long lba, int blocks) {
        byte[] c = new byte[16];
        c[0] = (byte) op;
        Pdu.putInt(c, 2, (int) lba);
        c[7] = (byte) (blocks >>> 8);
        c[8] = (byte) blocks;
        return c;
    }

    /** 512 random bytes, the same for the same {@code seed}. */
    static byte[] block(long seed) {
        byte[] b = new byte[512];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** TEST UNIT READY. */
    static IscsiTestInitiator.Result tur(IscsiTestInitiator c) throws IOException {
        return c.command(new byte[6], new byte[0], 0, 0, false);
    }

    static void assertUnitAttention(int ascq, IscsiTestInitiator.Result r) {
        assertEquals(CHECK, r.status());
        assertEquals(UNIT_ATTENTION, r.senseKey());
        assertEquals(ascq, r.ascq(), Integer.toHexString(r.ascq()));
    }

    /** WRITE(10) of one zeroed block at LBA 1 with immediate data; returns the status. */
    static int write(IscsiTestInitiator c) throws IOException {
        byte[] cdb = cdb10(0x2A, 1, 1);
        return c.command(java.util.Arrays.copyOf(cdb, 10), new byte[512], 512, 512, false).status();
    }

    /** READ(10) of the block at LBA 1; returns the status. */
    static int read(IscsiTestInitiator c) throws IOException {
        byte[] cdb = cdb10(0x28, 1, 1);
        return c.command(java.util.Arrays.copyOf(cdb, 10), new byte[0], 0, 512, true).status();
    }

    /**
     * A 6-byte command {@code op} with no fields but the allocation length of MODE SENSE(6) (all
     * pages) and INQUIRY; returns the status.
     */
    static int run6(IscsiTestInitiator c, int op) throws IOException {
        byte[] cdb = new byte[6];
        cdb[0] = (byte) op;
        if (op == 0x1A) {
            cdb[2] = 0x3F;
            cdb[4] = (byte) 255;
            return c.command(cdb, new byte[0], 0, 255, true).status();
        }
        if (op == 0x12) {
            cdb[4] = 96;
            return c.command(cdb, new byte[0], 0, 96, true).status();
        }
        return c.command(cdb, new byte[0], 0, 0, false).status();
    }

    /** PERSISTENT RESERVE OUT with {@code action}, {@code type} and a parameter list of {@code length} bytes. */
    static byte[] proutCdb(int action, int type, int length) {
        byte[] c = new byte[10];
        c[0] = 0x5F;
        c[1] = (byte) action;
        c[2] = (byte) type;
        Pdu.putInt(c, 5, length);
        return c;
    }

    /** PERSISTENT RESERVE OUT with the basic 24-byte parameter list: reservation key, service action key, flags. */
    static IscsiTestInitiator.Result prout(IscsiTestInitiator c, int action, int type, long key, long serviceKey, int flags)
            throws IOException {
        byte[] p = new byte[24];
        Pdu.putLong(p, 0, key);
        Pdu.putLong(p, 8, serviceKey);
        p[20] = (byte) flags;
        return c.command(proutCdb(action, type, 24), p, 24, 24, false);
    }
}
