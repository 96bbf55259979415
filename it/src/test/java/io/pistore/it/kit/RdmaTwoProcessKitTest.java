package io.pistore.it.kit;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.TargetListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The rdma kit with the target in another JVM ({@link TcpTargetProcess} on {@code rdma}, soft
 * provider): the two soft devices share nothing but the packet path's socket. Each round trip still
 * checks which path its format took on the host.
 */
class RdmaTwoProcessKitTest extends RdmaTransportKitTest {
    private static RemoteTarget target;

    @BeforeAll
    static void startTargetProcess() throws Exception {
        target = RemoteTarget.start("rdma");
    }

    @AfterAll
    static void stopTargetProcess() throws Exception {
        if (target != null) {
            target.stop();
        }
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
