package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.LinearizabilityChecker;
import io.pistore.testkit.LinearizabilityChecker.Op;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients, one thread per device given, that read and write values unique to each client into a few
 * blocks (each block a register, {@code first} to {@code first + registers - 1}) and record every
 * operation's invocation, completion and result for {@link LinearizabilityChecker}. A failed write's
 * outcome is unknown to the checker, a failed read is left out; after a failure a client waits until
 * the volume answers it again (a read it does not record), so a burst of failures cannot fill the
 * history with unknown writes (each one multiplies the states the checker searches).
 */
final class RegisterClients implements AutoCloseable {
    private final List<Op> history = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final long first;
    private final int registers;
    private final int blockSize;

    private RegisterClients(long first, int registers, int blockSize) {
        this.first = first;
        this.registers = registers;
        this.blockSize = blockSize;
    }

    /** Zeroes the registers through the first device, then starts client {@code i} on {@code devices[i]} (seed {@code seed + i}). */
    static RegisterClients start(List<BlockDevice> devices, long first, int registers, int blockSize, long seed)
            throws Exception {
        RegisterClients rc = new RegisterClients(first, registers, blockSize);
        for (int r = 0; r < registers; r++) {
            Completion z = devices.get(0).writeZeroes(first + r, 1).get(60, TimeUnit.SECONDS);
            assertTrue(z.isSuccess(), "zeroing register " + r + ": " + z);
        }
        for (int c = 0; c < devices.size(); c++) {
            int client = c;
            BlockDevice dev = devices.get(c);
            Thread t = new Thread(() -> {
                try {
                    rc.clientLoop(client, dev, new Random(seed + client));
                } catch (Throwable e) {
                    rc.errors.add(e);
                }
            }, "register-client-" + c);
            rc.threads.add(t);
            t.start();
        }
        return rc;
    }

    /** Waits until {@code n} more operations are recorded (or a client failed), at most 120 s. */
    void awaitMore(int n) {
        int target = history.size() + n;
        Eventually.await(n + " more operations", Duration.ofSeconds(120),
                () -> history.size() >= target || !errors.isEmpty());
    }

    /** Whether every client still runs without an exception. */
    boolean healthy() {
        return errors.isEmpty();
    }

    /** Operations that failed (their outcome unknown, or a read left out). */
    int failed() {
        return failed.get();
    }

    /** Stops the clients, asserts none threw, and checks the history. */
    LinearizabilityChecker.Result stopAndCheck() throws InterruptedException {
        close();
        assertEquals(List.of(), errors, "client threads failed");
        return LinearizabilityChecker.check(history);
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(90));
        }
    }

    private void clientLoop(int client, BlockDevice dev, Random rnd) throws Exception {
        long seq = 0;
        while (!stop.get()) {
            int reg = rnd.nextInt(registers);
            ByteBuffer block = ByteBuffer.allocate(blockSize);
            if (rnd.nextBoolean()) {
                long value = ((long) (client + 1) << 40) | ++seq;
                block.putLong(0, value);
                long invoked = System.nanoTime();
                Completion c = dev.write(first + reg, ScatterList.of(block)).get(60, TimeUnit.SECONDS);
                long completed = System.nanoTime();
                history.add(Op.write(client, reg, value, invoked,
                        c.isSuccess() ? completed : LinearizabilityChecker.UNKNOWN));
                if (!c.isSuccess()) {
                    failed.incrementAndGet();
                    awaitAnswering(dev);
                }
            } else {
                long invoked = System.nanoTime();
                Completion c = dev.read(first + reg, ScatterList.of(block)).get(60, TimeUnit.SECONDS);
                long completed = System.nanoTime();
                if (c.isSuccess()) {
                    history.add(Op.read(client, reg, block.getLong(0), invoked, completed));
                } else {
                    failed.incrementAndGet();
                    awaitAnswering(dev);
                }
            }
        }
    }

    /** Waits until {@code dev} answers a read again (or the clients stop); the read is not recorded. */
    private void awaitAnswering(BlockDevice dev) {
        Eventually.await("the volume to answer again", Duration.ofSeconds(120), () -> {
            if (stop.get()) {
                return true;
            }
            try {
                return dev.read(first, ScatterList.of(ByteBuffer.allocate(blockSize))).get(60, TimeUnit.SECONDS)
                        .isSuccess();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the wait then ends with the interrupt
                return false;
            } catch (Exception e) {
                return false;
            }
        });
    }
}
