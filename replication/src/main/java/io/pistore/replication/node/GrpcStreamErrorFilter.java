package io.pistore.replication.node;

import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Drops gRPC's report of an answer whose trailers outgrew the 8 KiB of headers its caller accepts.
 * Ratis answers a request for a group this server does not run (removed, or stopped after its
 * storage failed) with its exception serialized into the trailers, which outgrows the limit; gRPC
 * then logs a stack trace at WARNING for every such request (dozens a second while a peer retries),
 * and the caller's call fails anyway with a status of its own, which pistore reports where it
 * matters ({@code replicas status}). Every other record passes.
 */
final class GrpcStreamErrorFilter implements Filter {
    /** The logger of the server handler of Ratis's shaded gRPC; held, as java.util.logging forgets one nobody references. */
    static final Logger NETTY_SERVER_HANDLER = Logger.getLogger("org.apache.ratis.thirdparty.io.grpc.netty.NettyServerHandler");
    private static final String HEADER_LIST_SIZE = "Http2Exception$HeaderListSizeException";

    private final Filter before;

    private GrpcStreamErrorFilter(Filter before) {
        this.before = before;
    }

    /** Installs the filter on gRPC's server handler logger (once; a filter already there still applies). */
    static synchronized void install() {
        if (!(NETTY_SERVER_HANDLER.getFilter() instanceof GrpcStreamErrorFilter)) {
            NETTY_SERVER_HANDLER.setFilter(new GrpcStreamErrorFilter(NETTY_SERVER_HANDLER.getFilter()));
        }
    }

    @Override
    public boolean isLoggable(LogRecord r) {
        for (Throwable t = r.getThrown(); t != null; t = t.getCause()) {
            if (t.getClass().getName().endsWith(HEADER_LIST_SIZE)) {
                return false;
            }
        }
        return before == null || before.isLoggable(r);
    }
}
