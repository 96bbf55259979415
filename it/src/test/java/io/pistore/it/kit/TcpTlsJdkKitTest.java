package io.pistore.it.kit;

/** The TLS kit on the JDK's engine. */
class TcpTlsJdkKitTest extends TcpTlsKit {
    @Override
    protected String engine() {
        return "jdk";
    }
}
