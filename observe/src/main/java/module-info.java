/**
 * Optional observability of a {@code KvBlockManager}: KV events in vLLM's wire format (msgpack over
 * a ZeroMQ PUB socket, {@link io.tierkv.observe.ZmqKvEventPublisher}) and Micrometer metrics
 * ({@link io.tierkv.observe.TierKvMetrics}) with a Prometheus scrape endpoint
 * ({@link io.tierkv.observe.MetricsEndpoint}). The only module that needs JeroMQ, msgpack and
 * Micrometer; {@code core} and {@code tiers} need none of them.
 */
@SuppressWarnings("requires-automatic")
module io.tierkv.observe {
    requires transitive io.tierkv.tiers;
    requires jdk.httpserver;
    requires static info.picocli;
    requires static com.google.errorprone.annotations; // @GuardedBy: compile time only
    requires org.zeromq.jeromq;
    requires msgpack.core;
    requires transitive micrometer.core;
    requires transitive micrometer.registry.prometheus;

    exports io.tierkv.observe;
    opens io.tierkv.observe to info.picocli;
}
