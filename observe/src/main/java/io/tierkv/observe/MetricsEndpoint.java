package io.tierkv.observe;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Serves {@code GET /metrics} in the Prometheus text format (version 0.0.4) from a
 * {@link PrometheusMeterRegistry} bound to a {@link TierKvMetrics}, on the JDK's HTTP server. Each
 * scrape refreshes the binder's snapshot first, so it shows one {@code stats()} call.
 *
 * <p>Thread-safe: scrapes run on the server's one thread; {@link #close()} may come from any.
 */
public final class MetricsEndpoint implements AutoCloseable {

    /** The content type of the Prometheus text format. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final PrometheusMeterRegistry registry;
    private final TierKvMetrics metrics;

    /**
     * Binds the metrics into a fresh Prometheus registry and starts serving.
     *
     * @param metrics the binder
     * @param port    the TCP port on all interfaces, 0..65535 (0: any free port, see {@link #port()})
     * @throws NullPointerException     if metrics is null
     * @throws IllegalArgumentException if the port is out of range, naming it
     * @throws UncheckedIOException     if the port cannot be bound (the message names it)
     */
    public MetricsEndpoint(TierKvMetrics metrics, int port) {
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("--metrics-port: " + port + " (expected 0 <= port <= 65535)");
        }
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        metrics.bindTo(registry);
        try {
            this.server = HttpServer.create(new InetSocketAddress(port), 0);
        } catch (IOException e) {
            registry.close();
            throw new UncheckedIOException("--metrics-port " + port + ": cannot bind (" + e.getMessage() + ")", e);
        }
        server.createContext("/metrics", exchange -> {
            try (exchange) {
                metrics.refresh();
                byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        });
        server.start();
    }

    /** {@return the port served, the one bound when 0 was asked} */
    public int port() {
        return server.getAddress().getPort();
    }

    /** {@return the registry the metrics are bound to} */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** {@return the binder} */
    public TierKvMetrics metrics() {
        return metrics;
    }

    /** Stops serving (a scrape in progress gets up to 1 s) and closes the registry; idempotent. */
    @Override
    public void close() {
        server.stop(1);
        registry.close();
    }
}
