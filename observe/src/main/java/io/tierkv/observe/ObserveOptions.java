package io.tierkv.observe;

import picocli.CommandLine.Option;

/**
 * The observability options of the commands that build a {@code KvBlockManager}, declared once
 * and added to each command as a picocli {@code @Mixin}: {@code --kv-events ENDPOINT} publishes
 * the manager's KV events in vLLM's wire format on a ZeroMQ PUB socket, and
 * {@code --metrics-port P} serves its Micrometer metrics at {@code http://HOST:P/metrics} for
 * Prometheus. Both are off by default. See the README, "KV events and metrics".
 *
 * <p>Thread-safety: picocli sets the fields while parsing, on the command's thread; the command
 * reads them afterwards on the same thread.
 */
public final class ObserveOptions {

    @Option(names = "--kv-events", paramLabel = "ENDPOINT",
            description = "publish KV events (vLLM's BlockStored/BlockRemoved/AllBlocksCleared, msgpack) on a ZeroMQ "
                    + "PUB socket: tcp://*:5557 binds, tcp://127.0.0.1:5557 connects to a consumer that binds "
                    + "(default: off)")
    private String kvEvents;

    @Option(names = "--metrics-port", paramLabel = "P",
            description = "serve Prometheus metrics (tierkv_*) at http://HOST:P/metrics, 0..65535, 0 = any free port "
                    + "(default: off)")
    private Integer metricsPort;

    /** Creates the options (picocli instantiates them for each command). */
    public ObserveOptions() {
    }

    /**
     * Checks the values, before the command does any work.
     *
     * @throws IllegalArgumentException naming the option, its value and the bound:
     *                                  {@code --metrics-port 70000 (expected 0 <= N <= 65535)},
     *                                  {@code --kv-events nowhere (expected tcp://HOST:PORT: ...)}
     */
    public void check() {
        if (metricsPort != null && (metricsPort < 0 || metricsPort > 65_535)) {
            throw new IllegalArgumentException("--metrics-port " + metricsPort + " (expected 0 <= N <= 65535)");
        }
        if (kvEvents != null && !kvEvents.startsWith("tcp://")) {
            throw new IllegalArgumentException("--kv-events " + kvEvents + " (expected tcp://HOST:PORT: JeroMQ carries "
                    + "ipc:// over loopback TCP, which a libzmq consumer cannot reach, and inproc:// has no consumer "
                    + "outside this process)");
        }
    }

    /**
     * Opens an observation for the "on" half of {@code tierkv replay --observe-ab}: the options'
     * endpoint and port, or where they are not given a publisher bound to a free loopback port
     * ({@code tcp://127.0.0.1:*}, no subscriber: every batch is still encoded and sent) and metrics
     * on a free port; the publisher does not wait for a subscriber.
     *
     * @return the observation; close it after the run
     */
    public Observation openForComparison() {
        check();
        return observation(kvEvents != null ? kvEvents : "tcp://127.0.0.1:*", metricsPort != null ? metricsPort : 0, 0);
    }

    /**
     * Opens what the options ask for: the publisher now, the metrics endpoint at the first manager.
     *
     * @return the observation; close it after the last manager
     * @throws IllegalArgumentException if the endpoint cannot be bound or connected
     */
    public Observation open() {
        check();
        Observation o = observation(kvEvents, metricsPort, Observation.AWAIT_SUBSCRIBER_MILLIS);
        // a port the system chose: say which, as for the metrics
        if (kvEvents != null && (kvEvents.endsWith(":0") || kvEvents.endsWith(":*"))) {
            System.err.println("kv events at " + o.boundEventEndpoint());
        }
        return o;
    }

    /** Opens an observation; a refused endpoint's message names the option as typed, {@code --kv-events}. */
    private static Observation observation(String endpoint, Integer port, long awaitSubscriberMillis) {
        try {
            return new Observation(endpoint, port, awaitSubscriberMillis);
        } catch (IllegalArgumentException e) {
            String library = "kv-events endpoint: ";
            if (e.getMessage() == null || !e.getMessage().startsWith(library)) {
                throw e;
            }
            // the option, not the library's name; no cause, whose message this one already carries
            throw new IllegalArgumentException("--kv-events " + e.getMessage().substring(library.length()));
        }
    }
}
