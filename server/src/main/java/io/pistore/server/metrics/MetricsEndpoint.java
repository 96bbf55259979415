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
    private final MetricsWebConfig web;

    private MetricsEndpoint(HTTPServer server, String host, MetricsWebConfig web) {
        this.server = server;
        this.host = host;
        this.web = web;
    }

    /**
     * Starts serving {@code collector} on {@code address}: {@code HOST:PORT}, {@code [V6]:PORT}, or a
     * bare {@code PORT}, which means loopback (metrics name volumes: not for every network by default).
     */
    public static MetricsEndpoint start(String address, EngineCollector collector) throws IOException {
        return start(address, collector, null);
    }

    /**
     * As {@link #start(String, EngineCollector)}, behind the TLS and basic authentication of
     * {@code web} (null: plain HTTP, no authentication).
     */
    public static MetricsEndpoint start(String address, EngineCollector collector, MetricsWebConfig web)
            throws IOException {
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
        HTTPServer.Builder b = HTTPServer.builder().hostname(host).port(p).registry(registry);
        if (web != null && web.tls()) {
            b.httpsConfigurator(web.httpsConfigurator());
        }
        if (web != null && web.authenticates()) {
            b.authenticator(web.authenticator());
        }
        return new MetricsEndpoint(b.buildAndStart(), host, web);
    }

    /** The port it listens on (the one chosen, for port 0). */
    public int port() {
        return server.getPort();
    }

    /** Where to scrape it: {@code http://HOST:PORT/metrics}, or {@code https://} with TLS. */
    public String url() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return (tls() ? "https" : "http") + "://" + h + ":" + port() + "/metrics";
    }

    /** Whether it serves HTTPS (a web config with TLS). */
    public boolean tls() {
        return web != null && web.tls();
    }

    /** The address it is bound to, with the port chosen. */
    public java.net.InetSocketAddress address() {
        return new java.net.InetSocketAddress(host, port());
    }

    @Override
    public void close() {
        server.close();
    }
}
