package io.pistore.it.kit;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.TargetListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The compatibility kit on tcp with the target in another JVM ({@link TcpTargetProcess}), started
 * once for the class: host and target share nothing but the loopback socket. The volumes persist
 * across the tests of the class (every kit test writes what it reads).
 */
class TcpTwoProcessKitTest extends TransportCompatibilityKit {
    private static RemoteTarget target;

    @BeforeAll
    static void startTargetProcess() throws Exception {
        target = RemoteTarget.start("tcp");
    }

    @AfterAll
    static void stopTargetProcess() throws Exception {
        if (target != null) {
            target.stop();
        }
    }

    @Override
    protected String transportName() {
        return "tcp";
    }

    @Override
    protected String listenAddress() {
        return target.address();
    }

    @Override
    protected TargetListener startListener(BlockTransport t) {
        return target.listener();
    }
}
