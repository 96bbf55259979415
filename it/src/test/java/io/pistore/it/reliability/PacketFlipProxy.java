package io.pistore.it.reliability;

import io.pistore.transport.rdma.verbs.soft.SoftPackets;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;

/**
 * A TCP proxy between two soft RDMA devices (the packet path of docs/RDMA.md: length-prefixed frames,
 * a CRC-32 at the end of each) that flips one bit, at a chosen rate, somewhere after the length field
 * of frames that carry data: SEND, RDMA WRITE and READ responses (header, payload or CRC). It counts
 * the request frames it sees again (a PSN at or below the highest one seen in that direction): the
 * retransmissions that a dropped frame causes.
 */
final class PacketFlipProxy extends LoopbackRelay {
    final LongAdder injected = new LongAdder();
    final LongAdder frames = new LongAdder();
    final LongAdder resentRequests = new LongAdder();
    private final double rate;
    private final Random random;

    PacketFlipProxy(String targetAddress, double rate, long seed) throws IOException {
        super(targetAddress, "packet-flip-proxy");
        this.rate = rate;
        this.random = new Random(seed);
        start();
    }

    @Override
    void relay(Socket host, Socket tgt) {
        pump(host, tgt, "up", this::copyFrames);
        pump(tgt, host, "down", this::copyFrames);
    }

    /** Frames from one side to the other, a bit flipped now and then; resent requests counted. */
    private void copyFrames(DataInputStream in, OutputStream out) throws IOException {
        int highestPsn = -1;
        byte[] f = new byte[1 << 16];
        while (true) {
            in.readFully(f, 0, 4);
            int rest = SoftPackets.getInt(f, 0);
            if (f.length < 4 + rest) {
                byte[] g = new byte[4 + rest];
                System.arraycopy(f, 0, g, 0, 4);
                f = g;
            }
            in.readFully(f, 4, rest);
            int len = 4 + rest;
            int op = SoftPackets.op(f);
            frames.increment();
            if (SoftPackets.isRequest(op)) {
                int psn = SoftPackets.psn(f);
                if (psn <= highestPsn) {
                    resentRequests.increment();
                }
                highestPsn = Math.max(highestPsn, psn);
            }
            if (SoftPackets.carriesData(op) && len > SoftPackets.HEADER + SoftPackets.CRC + 64) {
                double roll;
                int at;
                int bit;
                synchronized (random) {
                    roll = random.nextDouble();
                    at = 4 + random.nextInt(len - 4);
                    bit = random.nextInt(8);
                }
                if (roll < rate) {
                    f[at] ^= (byte) (1 << bit);
                    injected.increment();
                }
            }
            out.write(f, 0, len);
        }
    }
}
