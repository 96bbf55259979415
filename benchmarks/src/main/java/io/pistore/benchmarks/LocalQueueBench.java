package io.pistore.benchmarks;

import io.pistore.engine.Transports;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.VolumeInfo;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The {@code local} transport's submission queue under several producers: every JMH thread
 * ({@code -t N}) submits to the same host queue and waits for its own completion; the target
 * handler completes at once, so the queue hand-off is what is measured.
 * The queue is JCTools' MPSC array queue; the JDK's {@code ArrayBlockingQueue} it was compared with
 * is in docs/BENCHMARKS.md (an older commit's engine jar on the class path repeats that comparison).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 2, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LocalQueueBench {
    private BlockTransport transport;
    private TargetListener listener;
    private HostConnection connection;
    private HostQueue hostQueue;
    private final BlockRequest flush = BlockRequest.flush("v");

    /** Completes every request at once, on the worker: only the queue and hand-off cost remain. */
    static final class Immediate implements TargetHandler {
        @Override
        public List<VolumeInfo> volumes() {
            return List.of(new VolumeInfo("v", 1024, BlockFormat.of(4096, 8)));
        }

        @Override
        public void execute(BlockRequest request, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
            done.accept(Completion.success());
        }
    }

    @Setup
    public void setUp() throws Exception {
        transport = Transports.find("local").create();
        listener = transport.listen("local:0", new Immediate());
        connection = transport.connect(listener.address(), new ConnectOptions(1, 256));
        hostQueue = connection.queue(0);
    }

    @TearDown
    public void tearDown() throws Exception {
        connection.close();
        listener.close();
        transport.close();
    }

    /** Per thread: the window of requests it keeps outstanding. */
    @State(Scope.Thread)
    public static class Window {
        @SuppressWarnings("unchecked")
        final CompletableFuture<Completion>[] futures = new CompletableFuture[BATCH];
    }

    static final int BATCH = 16;

    /**
     * Submits {@value #BATCH} requests, then waits for them all: the worker stays busy across a
     * batch and the producers contend on the queue, which is what the queue choice can change
     * (waiting for each request alone would measure the worker's wake-up instead).
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int submitBatchAndWait(Window w) throws Exception {
        int ok = 0;
        for (int i = 0; i < BATCH; i++) {
            CompletableFuture<Completion> f;
            while ((f = hostQueue.submit(flush)).isDone() && f.get().status() == Status.QUEUE_FULL) {
                Thread.onSpinWait();
            }
            w.futures[i] = f;
        }
        for (int i = 0; i < BATCH; i++) {
            ok += w.futures[i].get().isSuccess() ? 1 : 0;
        }
        return ok;
    }
}
