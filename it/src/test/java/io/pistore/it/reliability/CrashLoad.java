package io.pistore.it.reliability;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The write load of one kill point: one writer thread per host, each on its own LBA range (so each
 * block has one writer and its history is in order), sending writes of 1 to 4 blocks, one in ten a
 * write-zeroes and one in six with FUA, one request at a time; and a flusher on a host of its own.
 * Everything sent goes to a {@link WriteHistory} first; a writer stops at its first failure (the
 * server is gone).
 */
final class CrashLoad {
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong fuaWrites = new AtomicLong();
    final AtomicLong zeroWrites = new AtomicLong();
    final AtomicLong flushes = new AtomicLong();

    /** Starts the load; {@code versions} numbers the written contents across kill points. */
    CrashLoad(WriteHistory history, List<CrashHost> writers, CrashHost flusher, int blocks, AtomicLong versions,
              SplittableRandom seeds) {
        int per = blocks / writers.size();
        for (int w = 0; w < writers.size(); w++) {
            int lo = w * per;
            int hi = w == writers.size() - 1 ? blocks : lo + per;
            CrashHost host = writers.get(w);
            SplittableRandom r = seeds.split();
            threads.add(new Thread(() -> write(host, history, lo, hi, versions, r), "crash-writer-" + w));
        }
        threads.add(new Thread(() -> flush(flusher, history), "crash-flusher"));
        threads.forEach(Thread::start);
    }

    private void write(CrashHost host, WriteHistory history, int lo, int hi, AtomicLong versions, SplittableRandom r) {
        while (!stop.get()) {
            int n = 1 + r.nextInt(4);
            long lba = lo + r.nextInt(hi - lo - n + 1);
            boolean zeroes = r.nextInt(10) == 0;
            boolean fua = r.nextInt(6) == 0;
            long[] v = new long[n];
            ByteBuffer data = zeroes ? null : ByteBuffer.allocate(n * BlockVersions.BS);
            for (int i = 0; i < n; i++) {
                v[i] = zeroes ? 0 : versions.incrementAndGet();
                if (data != null) {
                    data.put(BlockVersions.content(lba + i, v[i]));
                }
            }
            WriteHistory.Write[] sent = history.sending(lba, v, fua);
            CrashHost.Ack a = zeroes ? host.writeZeroes(lba, n, fua) : host.write(lba, data.array(), fua);
            if (a == CrashHost.Ack.NOT_SENT) {
                history.notSent(lba, sent);
                continue;
            }
            if (a == CrashHost.Ack.FAILED) {
                return;
            }
            history.acknowledged(sent);
            if (fua) {
                fuaWrites.incrementAndGet();
            }
            if (zeroes) {
                zeroWrites.incrementAndGet();
            }
        }
    }

    private void flush(CrashHost host, WriteHistory history) {
        while (!stop.get()) {
            long start = history.flushStarting();
            CrashHost.Ack a = host.flush();
            if (a == CrashHost.Ack.FAILED) {
                return;
            }
            if (a == CrashHost.Ack.DONE) {
                history.flushed(start);
                flushes.incrementAndGet();
            }
            try {
                Thread.sleep(5); // not a synchronisation: the pacing of the flushes
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Stops the threads (after the kill, each ends at its failed request) and waits for them. */
    void stopAndJoin() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(60_000);
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not end within 60 s of the kill");
            }
        }
    }
}
