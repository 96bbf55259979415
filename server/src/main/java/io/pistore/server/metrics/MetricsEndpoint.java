package io.pistore.server.metrics;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;

/**
 * The HTTP endpoint a Prometheus server scrapes ({@code /metrics}): the engine's figures through an
 * {@link EngineCollector} and the JVM's through the client's standard JVM instrumentation, in a
 * registry of its own (so two servers in one JVM, as in tests, do not collide).
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final HTTPServer server;
    private final String host;

    private MetricsEndpoint(HTTPServer server, String host) {
        this.server = server;
        this.host = host;
    }

    /**
     * Starts serving {@code collector} on {@code address}: {@code HOST:PORT}, {@code [V6]:PORT}, or a
     * bare {@code PORT}, which means loopback (metrics name volumes: not for every network by default).
     */
    public static MetricsEndpoint start(String address, EngineCollector collector) throws IOException {
        String host;
        String port;
        int colon = address.lastIndexOf(':');
        if (colon < 0) {
            host = "127.0.0.1";
            port = address;
        } else {
            host = address.substring(0, colon);
            port = address.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isEmpty()) {
                host = "127.0.0.1";
            }
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected HOST:PORT or PORT, not '" + address + "'");
        }
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException("port must be 0 to 65535, not " + p);
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(collector);
        JvmMetrics.builder().register(registry);
        HTTPServer s = HTTPServer.builder().hostname(host).port(p).registry(registry).buildAndStart();
        return new MetricsEndpoint(s, host);
    }

    /** The port it listens on (the one chosen, for port 0). */
    public int port() {
        return server.getPort();
    }

    /** Where to scrape it: {@code http://HOST:PORT/metrics}. */
    public String url() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return "http://" + h + ":" + port() + "/metrics";
    }

    @Override
    public void close() {
        server.close();
    }
}
