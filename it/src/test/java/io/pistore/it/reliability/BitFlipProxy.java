package io.pistore.it.reliability;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A TCP proxy between a pistore host and a pistore target that understands the framing of
 * docs/PROTOCOL-TCP.md (64-byte header, optional header digest, payload, optional data digest) and
 * flips one bit in chosen frames at a chosen rate. HELLO and HELLO_REPLY pass untouched.
 *
 * <ul>
 *   <li>{@link Mode#PAYLOAD}: a bit of a WRITE request's or a successful READ response's blocks
 *       (data or PI). A bit of an application tag that the command does not check (mask 0), and a
 *       bit of a block whose tuple is the unwritten escape, is not flipped (counted apart): PI does
 *       not look there by design.
 *   <li>{@link Mode#LBA}: one of the low 10 bits of a WRITE request's LBA field.
 *   <li>{@link Mode#ANY}: any bit of any frame after the handshake (header, digests, payload); meant
 *       with digests on.
 * </ul>
 */
final class BitFlipProxy extends LoopbackRelay {
    enum Mode { PAYLOAD, LBA, ANY }

    final LongAdder injected = new LongAdder();
    final LongAdder injectedRequests = new LongAdder();
    final LongAdder injectedResponses = new LongAdder();
    final LongAdder skippedUncheckedApp = new LongAdder();
    final LongAdder skippedEscape = new LongAdder();
    final LongAdder frames = new LongAdder();
    private final Mode mode;
    private final double rate;
    private final boolean digests;
    private final int dataSize;
    private final int metaSize;
    private final Random random;

    BitFlipProxy(String targetAddress, Mode mode, double rate, boolean digests, int dataSize, int metaSize, long seed)
            throws IOException {
        super(targetAddress, "bitflip-proxy");
        this.mode = mode;
        this.rate = rate;
        this.digests = digests;
        this.dataSize = dataSize;
        this.metaSize = metaSize;
        this.random = new Random(seed);
        start();
    }

    @Override
    void relay(Socket host, Socket tgt) {
        Map<Integer, Integer> appMaskOfCommand = new ConcurrentHashMap<>();
        pump(host, tgt, "up", (in, out) -> copyFrames(in, out, true, appMaskOfCommand));
        pump(tgt, host, "down", (in, out) -> copyFrames(in, out, false, appMaskOfCommand));
    }

    /** Frames from one side to the other, HELLO untouched, the others given to {@link #corrupt}. */
    private void copyFrames(DataInputStream in, OutputStream out, boolean toTarget, Map<Integer, Integer> appMasks)
            throws IOException {
        byte[] header = new byte[64];
        while (true) {
            in.readFully(header);
            ByteBuffer h = ByteBuffer.wrap(header);
            int op = header[5] & 0xFF;
            int len = h.getInt(12);
            boolean hello = (op & 0x7F) == 0x01;
            int hd = !hello && digests ? 4 : 0;
            int dd = !hello && digests && len > 0 ? 4 : 0;
            byte[] frame = new byte[64 + hd + len + dd];
            System.arraycopy(header, 0, frame, 0, 64);
            in.readFully(frame, 64, frame.length - 64);
            if (!hello) {
                frames.increment();
                corrupt(frame, op, len, hd, toTarget, appMasks);
            }
            out.write(frame);
            out.flush();
        }
    }

    private void corrupt(byte[] frame, int op, int len, int hd, boolean toTarget, Map<Integer, Integer> appMasks) {
        ByteBuffer h = ByteBuffer.wrap(frame);
        int cmd = h.getInt(8);
        if (toTarget && (op == 0x10 || op == 0x11)) {
            appMasks.put(cmd, h.getShort(42) & 0xFFFF);
        }
        Integer appMask = toTarget ? null : appMasks.remove(cmd);
        double roll;
        int pick;
        int bit;
        synchronized (random) {
            roll = random.nextDouble();
            pick = random.nextInt(Integer.MAX_VALUE);
            bit = random.nextInt(8);
        }
        if (roll >= rate) {
            return;
        }
        int at;
        switch (mode) {
            case ANY:
                at = pick % frame.length;
                break;
            case LBA:
                if (!toTarget || op != 0x11) {
                    return;
                }
                at = 24 + 7 - (pick % 2); // the LBA's two low bytes: a low bit stays in range more often
                bit = pick % 2 == 0 ? bit : bit % 2;
                break;
            default: {
                boolean writeRequest = toTarget && op == 0x11;
                boolean readResponse = !toTarget && op == (0x10 | 0x80) && h.getShort(16) == 0;
                if (!(writeRequest || readResponse) || len == 0) {
                    return;
                }
                int blockSize = dataSize + metaSize;
                int off = pick % len;
                int block = off / blockSize;
                int inBlock = off % blockSize;
                int payload = 64 + hd;
                int tuple = payload + block * blockSize + dataSize;
                boolean escape = metaSize >= 8 && frame[tuple + 2] == (byte) 0xFF && frame[tuple + 3] == (byte) 0xFF;
                if (escape) {
                    skippedEscape.increment();
                    return;
                }
                if (inBlock == dataSize + 2 || inBlock == dataSize + 3) {
                    int mask = writeRequest ? h.getShort(42) & 0xFFFF : appMask == null ? 0xFFFF : appMask;
                    if (mask == 0) {
                        skippedUncheckedApp.increment();
                        return;
                    }
                }
                at = payload + off;
                break;
            }
        }
        frame[at] ^= (byte) (1 << bit);
        injected.increment();
        (toTarget ? injectedRequests : injectedResponses).increment();
    }
}
