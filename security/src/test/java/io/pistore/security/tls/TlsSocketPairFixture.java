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
        try (ServerSocketChannel l = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            clientSide = SocketChannel.open(l.getLocalAddress());
            serverSide = l.accept();
        }
        serverSide.configureBlocking(false);
        clientSide.configureBlocking(false);
    }

    @AfterEach
    void close() throws IOException {
        serverSide.close();
        clientSide.close();
    }
}
