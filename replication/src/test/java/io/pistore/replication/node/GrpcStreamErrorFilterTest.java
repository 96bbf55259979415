package io.pistore.replication.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http2.Http2Error;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http2.Http2Exception;
import org.junit.jupiter.api.Test;

/**
 * gRPC's stream errors for trailers that outgrow the caller's header limit are dropped from the log
 * once a replica node class is loaded; other records of that logger still pass.
 */
class GrpcStreamErrorFilterTest {
    @Test
    void oversizedTrailersAreDroppedAndEverythingElsePasses() throws Exception {
        Class.forName(ReplicaNode.class.getName()); // its loading installs the filter
        List<String> seen = new ArrayList<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.isLoggable(r.getLevel())) {
                    seen.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.addHandler(h);
        try {
            Http2Exception tooLarge = Http2Exception.headerListSizeError(7, Http2Error.PROTOCOL_ERROR, false,
                    "Header size exceeded max allowed size (8192)");
            GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.log(Level.WARNING, "Stream Error", tooLarge);
            GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.log(Level.WARNING, "Stream Error (wrapped)",
                    new RuntimeException(tooLarge));
            GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.log(Level.WARNING, "Connection Error",
                    Http2Exception.connectionError(Http2Error.PROTOCOL_ERROR, "bad frame"));
            GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.log(Level.WARNING, "no exception");
        } finally {
            GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.removeHandler(h);
        }
        assertEquals(List.of("Connection Error", "no exception"), seen);
        assertTrue(GrpcStreamErrorFilter.NETTY_SERVER_HANDLER.getFilter() instanceof GrpcStreamErrorFilter);
        assertFalse(seen.contains("Stream Error"));
    }
}
