package io.tierkv.observe;

import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import io.tierkv.tiers.events.KvEventStats;
import java.util.Optional;

/**
 * What a command observes its managers with: a ZeroMQ KV event publisher (one socket for every
 * manager the command builds in turn, so a soak restart continues its sequence numbers) and a
 * Prometheus endpoint whose metrics follow the manager attached last. Either may be absent.
 *
 * <p>Thread-safety: {@link #configure} and {@link #attach} run on the thread that builds the
 * managers; scrapes read the attached manager through a volatile field.
 */
public final class Observation implements AutoCloseable {

    /** How long the publisher's first batch waits for a subscriber (on the event thread, not the data path). */
    public static final long AWAIT_SUBSCRIBER_MILLIS = 1_000;

    private final ZmqKvEventPublisher publisher;
    private final Integer metricsPort;
    private MetricsEndpoint endpoint;
    private volatile KvBlockManager current;

    /**
     * Opens the publisher, if asked.
     *
     * @param kvEvents              the endpoint, or null for no events
     * @param metricsPort           the port, or null for no metrics
     * @param awaitSubscriberMillis the publisher's wait for a first subscriber
     * @throws IllegalArgumentException if the endpoint cannot be bound or connected
     */
    public Observation(String kvEvents, Integer metricsPort, long awaitSubscriberMillis) {
        this.publisher = kvEvents == null ? null : new ZmqKvEventPublisher(kvEvents, "", 0, awaitSubscriberMillis);
        this.metricsPort = metricsPort;
    }

    /** {@return where the event publisher was bound, its port resolved; null when it connected or there is none} */
    public String boundEventEndpoint() {
        return publisher == null ? null : publisher.boundEndpoint();
    }

    /** {@return an observation of nothing} */
    public static Observation none() {
        return new Observation(null, null, 0);
    }

    /**
     * Adds the event publisher to a manager's builder, if there is one.
     *
     * @param b the builder
     * @return the builder
     */
    public KvBlockManagerBuilder configure(KvBlockManagerBuilder b) {
        return publisher == null ? b : b.kvEvents(publisher);
    }

    /**
     * Makes a manager the one the metrics show; starts the endpoint at the first one.
     *
     * @param kv the manager just built
     * @throws IllegalArgumentException if the metrics port cannot be bound
     */
    public void attach(KvBlockManager kv) {
        current = kv;
        if (metricsPort != null && endpoint == null) {
            endpoint = new MetricsEndpoint(new TierKvMetrics(() -> current.stats(), this::eventStats), metricsPort);
            System.err.println("metrics at http://localhost:" + endpoint.port() + "/metrics");
        }
    }

    /**
     * {@return the KV event counters of the manager attached last (they stay readable after it is
     * closed), empty if none was attached or it has no event queue}
     */
    public Optional<KvEventStats> eventStats() {
        KvBlockManager kv = current;
        return kv == null ? Optional.empty() : kv.kvEventStats();
    }

    /** {@return whether events or metrics are on} */
    public boolean enabled() {
        return publisher != null || metricsPort != null;
    }

    /** Stops the endpoint and closes the publisher; idempotent. */
    @Override
    public void close() {
        if (endpoint != null) {
            endpoint.close();
            endpoint = null;
        }
        if (publisher != null) {
            publisher.close();
        }
    }
}
