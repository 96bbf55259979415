package io.pistore.it.kit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.TargetListener;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TcpTargetProcess} in a JVM of its own, started once for a kit class (the two-process
 * kits): where it listens, and a listener that stands for it in the kit.
 */
final class RemoteTarget {
    private final Process process;
    private final String address;

    private RemoteTarget(Process process, String address) {
        this.process = process;
        this.address = address;
    }

    /** Starts the target process on {@code transport} and waits until it says where it listens. */
    static RemoteTarget start(String transport) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        ProcessBuilder pb = new ProcessBuilder(java, "-Xss1m", "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), TcpTargetProcess.class.getName(), transport);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertNotNull(line, "the target process ended before listening");
        assertTrue(line.startsWith("listening "), line);
        return new RemoteTarget(p, line.substring("listening ".length()).trim());
    }

    String address() {
        return address;
    }

    /** A listener for the kit: the remote address; closing it leaves the process running for the class. */
    TargetListener listener() {
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

    /** Ends the process: its stdin closes, then, after 10 s, it is killed. */
    void stop() throws InterruptedException, java.io.IOException {
        process.getOutputStream().close();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
