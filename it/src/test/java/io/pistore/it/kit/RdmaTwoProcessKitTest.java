package io.pistore.it.kit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.TargetListener;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The rdma kit with the target in another JVM ({@link TcpTargetProcess} on {@code rdma}, soft
 * provider): the two soft devices share nothing but the packet path's socket. Each round trip still
 * checks which path its format took on the host.
 */
class RdmaTwoProcessKitTest extends RdmaTransportKitTest {
    private static Process target;
    private static String address;

    @BeforeAll
    static void startTargetProcess() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        ProcessBuilder pb = new ProcessBuilder(java, "-Xss1m", "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), TcpTargetProcess.class.getName(), "rdma");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        target = pb.start();
        BufferedReader r = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertNotNull(line, "the target process ended before listening");
        assertTrue(line.startsWith("listening "), line);
        address = line.substring("listening ".length()).trim();
    }

    @AfterAll
    static void stopTargetProcess() throws Exception {
        if (target != null) {
            target.getOutputStream().close();
            if (!target.waitFor(10, TimeUnit.SECONDS)) {
                target.destroyForcibly();
            }
        }
    }

    @Override
    protected String listenAddress() {
        return address;
    }

    @Override
    protected TargetListener startListener(BlockTransport t) {
        return new TargetListener() {
            @Override
            public String address() {
                return address;
            }

            @Override
            public void close() {
                // the process lives for the whole class
            }
        };
    }
}
