package io.pistore.app.bench;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Consumer;

/**
 * A test-only transport that behaves like {@code local} but flips one data bit of every read after
 * the target has checked it: silent corruption, as a faulty network or buffer reuse bug would cause.
 * Unavailable unless a test switches it on.
 */
public final class SilentCorruptionProvider extends SwitchedOffLocalProvider {
    public SilentCorruptionProvider() {
        super("corrupting");
    }

    @Override
    TargetHandler handler(TargetHandler target) {
        return new TargetHandler() {
            @Override
            public List<VolumeInfo> volumes() {
                return target.volumes();
            }

            @Override
            public void execute(BlockRequest r, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
                target.execute(r, checked, c -> {
                    if (r.op() == Operation.READ && c.isSuccess()) {
                        ByteBuffer b = r.data().segment(0);
                        b.put(100, (byte) (b.get(100) ^ 0x04));
                    }
                    done.accept(c);
                });
            }
        };
    }
}
