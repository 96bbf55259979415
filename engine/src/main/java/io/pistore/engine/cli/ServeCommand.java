package io.pistore.engine.cli;

import io.pistore.engine.Transports;
import io.pistore.engine.target.TargetService;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TargetListener;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pistore serve}: the target daemon. */
@Command(name = "serve", sortOptions = false,
        description = {"Serves the volumes of a data directory over a transport until SIGINT or SIGTERM.",
            "Listens on 127.0.0.1 unless --listen says otherwise; logs one line per connection."})
final class ServeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOption config;

    @Mixin
    DataDirOption data;

    @Option(names = "--transport", paramLabel = "NAME", defaultValue = "tcp",
            description = "Transport to serve on (default: ${DEFAULT-VALUE}; config key: transport).")
    String transport;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:4430",
            description = "Address to listen on (default: ${DEFAULT-VALUE}; config key: listen).")
    String listen;

    @Option(names = "--cache", paramLabel = "BYTES", defaultValue = "0", converter = Numbers.LongSizeConverter.class,
            description = "Read cache of hot blocks and their PI per volume, e.g. 256m (default: none; config key: cache).")
    long cache;

    /** Tests stop the server through this latch instead of a signal. */
    static volatile CountDownLatch stopForTests;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        BlockTransportProvider p;
        try {
            p = Transports.find(transport);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        CountDownLatch stop = stopForTests != null ? stopForTests : new CountDownLatch(1);
        DateTimeFormatter time = DateTimeFormatter.ofPattern("HH:mm:ss");
        try (VolumeStore store = VolumeCommand.open(data, cache, spec.commandLine().getErr());
             BlockTransport t = p.create()) {
            TargetService service = new TargetService(store, line -> {
                synchronized (out) {
                    out.println(LocalTime.now().format(time) + " " + line);
                }
            });
            try (TargetListener l = listen(t, service)) {
                out.println("pistore serve: " + store.list().size() + " volume(s) from " + data.dir + " on " + p.name()
                        + " " + l.address());
                for (Volume v : store.list()) {
                    out.println("  " + v.name() + " " + v.blockCount() + " blocks " + v.format());
                }
                Thread hook = new Thread(stop::countDown, "pistore-serve-stop");
                Runtime.getRuntime().addShutdownHook(hook);
                try {
                    stop.await();
                } finally {
                    try {
                        Runtime.getRuntime().removeShutdownHook(hook);
                    } catch (IllegalStateException shuttingDown) {
                        // the JVM is already stopping: the hook ran
                    }
                }
                out.println("pistore serve: stopping; flushing volumes");
                for (Volume v : store.list()) {
                    v.flush();
                }
            }
        }
        out.println("pistore serve: stopped");
        return ExitCodes.OK;
    }

    private TargetListener listen(BlockTransport t, TargetService s) {
        try {
            return t.listen(listen, s);
        } catch (IOException | IllegalArgumentException e) {
            throw CliException.usage("cannot listen on " + listen + ": " + e.getMessage());
        }
    }
}
