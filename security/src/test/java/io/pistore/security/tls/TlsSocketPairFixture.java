package io.pistore.security.tls;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** A test's certificates ({@link TestPki}) and a connected pair of non-blocking loopback sockets, closed after it. */
abstract class TlsSocketPairFixture {
    @TempDir
    Path dir;

    TestPki pki;
    SocketChannel serverSide;
    SocketChannel clientSide;

    @BeforeEach
    void connect() throws Exception {
        pki = TestPki.create(dir, "alice");
        SocketChannel[] pair = socketPair();
        serverSide = pair[0];
        clientSide = pair[1];
    }

    /** A connected pair of non-blocking loopback sockets: the accepted (server) side, then the client side. */
    static SocketChannel[] socketPair() throws IOException {
        SocketChannel server;
        SocketChannel client;
        try (ServerSocketChannel l = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            client = SocketChannel.open(l.getLocalAddress());
            server = l.accept();
        }
        server.configureBlocking(false);
        client.configureBlocking(false);
        return new SocketChannel[] {server, client};
    }

    @AfterEach
    void close() throws IOException {
        serverSide.close();
        clientSide.close();
    }
}
