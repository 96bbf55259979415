package io.pistore.it.reliability;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A crash host over tcp: one connection of its own, volume {@code v}. Writes carry PI the host
 * generated (pass mode), so the target checks what arrives; reads bring the stored PI back, which
 * the target checks and then the host checks again itself.
 */
final class TcpCrashHost implements CrashHost {
    private final BlockTransport transport;
    private final HostConnection connection;
    private final BlockDevice dev;
    private final BlockFormat format;

    TcpCrashHost(String address, String volume) throws IOException {
        transport = Transports.find("tcp").create();
        try {
            connection = transport.connect(address, new ConnectOptions(1, 8));
        } catch (IOException | RuntimeException e) {
            transport.close();
            throw e;
        }
        dev = BlockDevice.open(connection, volume);
        format = dev.format();
    }

    private PiContext context(long lba) {
        return PiContext.of(format, CheckFlags.ALL, format.refTagOf(lba), 0, 0);
    }

    private Protection protection(long lba) {
        return Protection.pass(CheckFlags.ALL, format.refTagOf(lba), 0, 0);
    }

    @Override
    public Ack write(long lba, byte[] blocks, boolean fua) {
        int n = blocks.length / BlockVersions.BS;
        ScatterList data = ScatterList.wrap(blocks);
        ScatterList meta = ScatterList.of(ByteBuffer.allocate(n * format.metadataSize()));
        Pi.generate(context(lba), data, meta, n);
        return ack(() -> dev.write(lba, data, meta, protection(lba), fua));
    }

    @Override
    public Ack writeZeroes(long lba, int blocks, boolean fua) {
        return ack(() -> dev.submit(BlockRequest.writeZeroes(dev.info().name(), lba, blocks, fua)));
    }

    @Override
    public Ack flush() {
        return ack(dev::flush);
    }

    private static Ack ack(Supplier<CompletableFuture<Completion>> submit) {
        Completion c;
        try {
            c = submit.get().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            return Ack.FAILED;
        }
        if (c.status() == Status.QUEUE_FULL) {
            return Ack.NOT_SENT;
        }
        return c.isSuccess() ? Ack.DONE : Ack.FAILED;
    }

    @Override
    public Readback read(long lba) throws IOException {
        ByteBuffer d = ByteBuffer.allocate(BlockVersions.BS);
        ByteBuffer m = ByteBuffer.allocate(format.metadataSize());
        Completion c;
        try {
            c = CrashRecoveryTest.awaitAny(() -> dev.read(lba, ScatterList.of(d), ScatterList.of(m), protection(lba)));
        } catch (Exception e) {
            throw new IOException("read of lba " + lba + ": " + e, e);
        }
        if (c.status().isPiError()) {
            return Readback.piError("target: " + c);
        }
        if (!c.isSuccess()) {
            throw new IOException("read of lba " + lba + ": " + c);
        }
        PiError e = Pi.verify(context(lba), ScatterList.of(d.duplicate().clear()), ScatterList.of(m.duplicate().clear()), 1);
        if (e != null) {
            return Readback.piError("host: " + e);
        }
        return Readback.ok(d.array());
    }

    @Override
    public void close() throws IOException {
        try {
            connection.close();
        } finally {
            transport.close();
        }
    }
}
