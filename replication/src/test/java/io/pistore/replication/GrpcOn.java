package io.pistore.replication;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a test class with the peers on Ratis's gRPC transport ({@code pistore.replication.rpc=grpc}),
 * the default (pistore's own RPC) again after it. The property is read each time a server or client
 * is made; this module's test classes run one at a time in a JVM, so no other class sees it.
 */
public final class GrpcOn implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, "grpc");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        System.clearProperty(ReplicationSettings.PEER_RPC_PROPERTY);
    }
}
