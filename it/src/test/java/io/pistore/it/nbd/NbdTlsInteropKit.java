package io.pistore.it.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the NBD-over-TLS interop tests share, whatever the credentials (X.509 certificates or
 * pre-shared keys): one 4 MiB volume "img" behind an NBD server that requires TLS, its log lines,
 * random images, and running a real client (nbdcopy, nbdinfo, qemu-img) with a time limit. A test
 * whose tool is missing is skipped and says which package has it ({@code .ci/run} installs them).
 */
abstract class NbdTlsInteropKit {
    static final long IMAGE_BYTES = 4L << 20;

    @TempDir
    Path dir;

    VolumeStore store;
    BlockTransport transport;
    TargetListener listener;
    HostConnection host;
    NbdServer server;
    /** The server's log lines; appended on its threads, read by tests meanwhile (iteration on a snapshot). */
    final List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** The server's TLS settings (its log is added here); runs once the temporary directory exists. */
    abstract NbdServer.Options tlsOptions() throws Exception;

    @BeforeEach
    void start() throws Exception {
        store = VolumeStore.open(dir.resolve("data"));
        store.create("img", BlockFormat.of(4096, 8), IMAGE_BYTES / 4096);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = transport.connect(listener.address(), new ConnectOptions(2, 256));
        serve(tlsOptions());
    }

    /** (Re)starts the server with {@code options}. */
    void serve(NbdServer.Options options) throws IOException {
        if (server != null) {
            server.close();
        }
        server = NbdServer.start("127.0.0.1:0", host, options.log(log::add));
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    int port() {
        return server.address().getPort();
    }

    Path randomImage(String name, long seed) throws IOException {
        Path p = dir.resolve(name);
        byte[] b = new byte[(int) IMAGE_BYTES];
        new Random(seed).nextBytes(b);
        Files.write(p, b);
        return p;
    }

    boolean logged(String text) {
        return logged(l -> l.contains(text));
    }

    /** Whether a line the server logged so far matches. */
    boolean logged(java.util.function.Predicate<String> line) {
        return log.stream().anyMatch(line);
    }

    /**
     * Whether the server logged {@code text}, waiting up to 10 s: a client can exit on its failed
     * handshake before the server's thread writes its line.
     */
    boolean logs(String text) {
        return logs(l -> l.contains(text));
    }

    /** Whether the server logged a line that matches, waiting up to 10 s as {@link #logs(String)} does. */
    boolean logs(java.util.function.Predicate<String> line) {
        return Eventually.within(Duration.ofSeconds(10), () -> logged(line));
    }

    static void assumeTool(String tool, String pkg) {
        ToolRun.assumeTool(tool, pkg);
    }

    ToolRun run(long seconds, String... cmd) throws IOException, InterruptedException {
        return ToolRun.run(dir, seconds, cmd);
    }

    /** {@link #run}, failing the test with the output and the server's log unless the exit code is 0. */
    ToolRun ok(long seconds, String... cmd) throws IOException, InterruptedException {
        ToolRun r = run(seconds, cmd);
        assertEquals(0, r.code(), String.join(" ", cmd) + " ->\n" + r.output() + "\nserver log: " + log);
        return r;
    }
}
