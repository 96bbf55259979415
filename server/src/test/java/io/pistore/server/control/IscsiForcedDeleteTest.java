package io.pistore.server.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.integrity.BlockFormat;
import io.pistore.server.PistoreServer;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume with an iSCSI session logged in to its target is in use for {@code volume delete}
 * through the control socket of a running server, and {@code --force} ends the session before the
 * volume goes.
 */
@Timeout(60)
class IscsiForcedDeleteTest {
    @TempDir
    Path dir;

    @Test
    void anIscsiSessionKeepsTheVolumeInUseUntilAForcedDeleteEndsIt() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("d", BlockFormat.of(512, 8), 64);
            s.create("other", BlockFormat.of(512, 8), 64);
        }
        try (PistoreServer server = PistoreServer.builder().dataDir(dir)
                .iscsi("127.0.0.1:0", new IscsiServer.Options()).metrics("127.0.0.1:0").build().start();
             Socket iscsi = new Socket("127.0.0.1", server.iscsi().address().getPort())) {
            iscsi.setSoTimeout(20_000);
            login(iscsi, IscsiServer.targetName("d"));
            assertEquals(1, server.iscsi().sessionsOn("d"), "counted before the initiator learns it is in");
            String metrics = scrape(server);
            assertTrue(metrics.contains("pistore_connections{transport=\"iscsi\"} 1.0"), "the initiator's connection: " + metrics);
            assertTrue(metrics.contains("pistore_connections_opened_total{transport=\"iscsi\"} 1.0"), metrics);
            assertEquals(0, server.iscsi().sessionsOn("other"));

            String refused = control(VolumeChange.delete("d", false));
            assertTrue(refused.startsWith("error\tusage\tvolume d is in use (") && refused.contains("1 iSCSI session(s)")
                    && refused.contains("--force ends its connections"), refused);
            assertTrue(Files.exists(dir.resolve("d.data")), "the refused delete removed nothing");
            assertEquals("ok\ndeleted other\n", control(VolumeChange.delete("other", false)),
                    "a volume without sessions is not in use");

            assertEquals("ok\nended 1 client connection(s) (NBD, iSCSI) to d\ndeleted d\n",
                    control(VolumeChange.delete("d", true)));
            assertEquals(-1, readUntilClosed(iscsi), "the forced delete ended the session");
            io.pistore.testkit.Eventually.await("no iSCSI connection in the metrics", () -> scrape(server)
                    .contains("pistore_connections{transport=\"iscsi\"} 0.0"));
            assertTrue(!Files.exists(dir.resolve("d.data")));
        }
    }

    /** The server's metrics, as text. */
    private static String scrape(PistoreServer server) {
        try (java.io.InputStream in = new java.net.URL(server.metrics().url()).openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Sends one control request and returns the whole reply. */
    private String control(VolumeChange change) throws IOException {
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(dir.resolve(ControlSocket.FILE)))) {
            c.write(ByteBuffer.wrap((change.encode() + "\n").getBytes(StandardCharsets.UTF_8)));
            ByteBuffer reply = ByteBuffer.allocate(4096);
            while (c.read(reply) >= 0) {
                if (!reply.hasRemaining()) {
                    break;
                }
            }
            return new String(reply.array(), 0, reply.position(), StandardCharsets.UTF_8);
        }
    }

    /** A bare iSCSI login straight to full feature phase (no digests, AuthMethod None). */
    private static void login(Socket s, String target) throws IOException {
        byte[] keys = ("InitiatorName=iqn.2026-12.io.pistore:forced-delete\0SessionType=Normal\0TargetName=" + target
                + "\0AuthMethod=None\0").getBytes(StandardCharsets.US_ASCII);
        ByteBuffer bhs = ByteBuffer.allocate(48);
        bhs.put(0, (byte) 0x43).put(1, (byte) 0x83).putInt(4, keys.length).put(8, (byte) 0x40).putInt(16, 1).putInt(24, 1);
        OutputStream out = s.getOutputStream();
        out.write(bhs.array());
        out.write(keys);
        out.write(new byte[(4 - (keys.length & 3)) & 3]);
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] r = new byte[48];
        in.readFully(r);
        assertEquals(0x23, r[0] & 0x3f, "login response");
        assertEquals(0, ByteBuffer.wrap(r).getShort(36), "login status");
        in.skipNBytes(((r[5] & 0xff) << 16 | (r[6] & 0xff) << 8 | r[7] & 0xff) + 3 & ~3);
    }

    /**
     * Reads until the server closes the connection: -1 then (a reset counts as closed), -2 when the
     * read timeout passes with the connection still open.
     */
    private static int readUntilClosed(Socket s) {
        try {
            while (s.getInputStream().read() >= 0) {
                continue;
            }
            return -1;
        } catch (java.net.SocketTimeoutException e) {
            return -2;
        } catch (IOException e) {
            return -1;
        }
    }
}
