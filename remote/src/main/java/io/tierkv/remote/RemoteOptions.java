package io.tierkv.remote;

import io.tierkv.core.spi.BlockStore;
import io.tierkv.core.spi.BlockStoreFactory;
import java.util.concurrent.TimeUnit;

/**
 * Configuration of a {@link RemoteStore}. Immutable; each field is validated on its own, so the
 * {@code withX} methods may be called in any order. Start from {@link #of(String)} and adjust with
 * the {@code withX} methods; each returns a validated copy. Every rejection is an
 * {@link IllegalArgumentException} whose message names the field, its value and the bound, for
 * example {@code "timeoutNanos: 0 (expected 1000000 <= timeoutNanos <= 60000000000)"}.
 *
 * @param url                    where the server is: {@code redis://HOST:PORT} (standalone) or
 *                               {@code redis-cluster://HOST:PORT[,HOST:PORT...]} (a cluster,
 *                               through these seeds); see {@link RemoteEndpoints}
 * @param namespace              the third part of every key, separating stores that share a
 *                               server: 1 to 64 characters of {@code [A-Za-z0-9._-]}
 * @param timeoutNanos           the longest one call ({@code lookup}, {@code put}, {@code get},
 *                               {@code getAll}) waits for the server, in [1 ms, 60 s]; past it the
 *                               call returns a miss or a dropped write
 * @param connectTimeoutNanos    TCP connect timeout of the first connection and of every
 *                               reconnection, in [1 ms, 60 s]
 * @param ttlSeconds             expiry set on every stored value ({@code SET ... EX}), in seconds;
 *                               0 for none; at most 10 years
 * @param eviction               who evicts: the server ({@code maxmemory} and {@code allkeys-lru})
 *                               or the store's own exact LRU index
 * @param lruCapacityBlocks      with {@link RemoteEviction#LRU}: the most blocks kept, in
 *                               [1, 2^40]; ignored with {@link RemoteEviction#SERVER}
 * @param breakerFailures        consecutive failed calls (timeouts or errors) that open the
 *                               circuit breaker, in [1, 1000000]
 * @param breakerOpenNanos       how long an open breaker refuses calls before it lets one probe
 *                               through, in [1 ms, 10 min]
 * @param maxInFlightBytes       the most value bytes of writes sent and not yet answered; a write
 *                               that would pass it is dropped and counted; in [1, 2^40]
 * @param reconnectMaxDelayNanos the longest wait between reconnection attempts (Lettuce's
 *                               exponential back-off, from 1 ms doubling), in [1 ms, 10 min]
 */
public record RemoteOptions(String url, String namespace, long timeoutNanos, long connectTimeoutNanos,
                            long ttlSeconds, RemoteEviction eviction, long lruCapacityBlocks, int breakerFailures,
                            long breakerOpenNanos, long maxInFlightBytes, long reconnectMaxDelayNanos)
        implements BlockStoreFactory {

    /** Shortest call, connect timeout, breaker back-off and reconnect delay: 1 ms. */
    public static final long MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Longest call and connect timeout: 60 s. */
    public static final long MAX_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** Longest breaker back-off and reconnect delay: 10 min. */
    public static final long MAX_DELAY_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** Longest TTL: 10 years. */
    public static final long MAX_TTL_SECONDS = TimeUnit.DAYS.toSeconds(3650);
    /** Largest LRU capacity and in-flight bound: 2^40. */
    public static final long MAX_COUNT = 1L << 40;
    /** Largest breaker threshold. */
    public static final int MAX_BREAKER_FAILURES = 1_000_000;
    /** Longest namespace. */
    public static final int MAX_NAMESPACE_CHARS = 64;

    /** Default namespace. */
    public static final String DEFAULT_NAMESPACE = "default";
    /**
     * Default call timeout: 100 ms, about 30 times a 2 MiB remote get on loopback (a median of
     * 2.8-3.8 ms on a loaded 2-core machine, BENCHMARKS.md, issue 14): room for a slow network
     * and a busy server, short enough that a stalled one costs a caller little.
     */
    public static final long DEFAULT_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Default connect timeout: 2 s. */
    public static final long DEFAULT_CONNECT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** Default owned-LRU capacity: 65,536 blocks. */
    public static final long DEFAULT_LRU_CAPACITY_BLOCKS = 1L << 16;
    /** Default breaker threshold: 5 consecutive failures. */
    public static final int DEFAULT_BREAKER_FAILURES = 5;
    /** Default breaker back-off: 1 s. */
    public static final long DEFAULT_BREAKER_OPEN_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Default bound on bytes in flight: 256 MiB. */
    public static final long DEFAULT_MAX_IN_FLIGHT_BYTES = 256L << 20;
    /** Default longest reconnect delay: 1 s. */
    public static final long DEFAULT_RECONNECT_MAX_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * Validates every field.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound
     */
    public RemoteOptions {
        RemoteEndpoints.parse(url);
        if (namespace == null || namespace.isEmpty() || namespace.length() > MAX_NAMESPACE_CHARS
                || !namespace.chars().allMatch(c -> c < 128 && (Character.isLetterOrDigit(c) || c == '.' || c == '_'
                        || c == '-'))) {
            throw new IllegalArgumentException("namespace: " + (namespace == null ? "null" : "'" + namespace + "'")
                    + " (expected 1 to " + MAX_NAMESPACE_CHARS + " characters of [A-Za-z0-9._-])");
        }
        checkRange("timeoutNanos", timeoutNanos, MIN_NANOS, MAX_TIMEOUT_NANOS);
        checkRange("connectTimeoutNanos", connectTimeoutNanos, MIN_NANOS, MAX_TIMEOUT_NANOS);
        checkRange("ttlSeconds", ttlSeconds, 0, MAX_TTL_SECONDS);
        if (eviction == null) {
            throw new IllegalArgumentException("eviction: null (expected SERVER or LRU)");
        }
        checkRange("lruCapacityBlocks", lruCapacityBlocks, 1, MAX_COUNT);
        checkRange("breakerFailures", breakerFailures, 1, MAX_BREAKER_FAILURES);
        checkRange("breakerOpenNanos", breakerOpenNanos, MIN_NANOS, MAX_DELAY_NANOS);
        checkRange("maxInFlightBytes", maxInFlightBytes, 1, MAX_COUNT);
        checkRange("reconnectMaxDelayNanos", reconnectMaxDelayNanos, MIN_NANOS, MAX_DELAY_NANOS);
    }

    private static void checkRange(String field, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(field + ": " + value + " (expected " + min + " <= " + field + " <= "
                    + max + ")");
        }
    }

    /**
     * Options with defaults: namespace {@value #DEFAULT_NAMESPACE}, 100 ms calls, 2 s connects,
     * no TTL, server eviction (LRU capacity 65,536 blocks if {@link RemoteEviction#LRU} is
     * chosen), the breaker opening after 5 consecutive failures for 1 s, 256 MiB in flight,
     * reconnects backing off to at most 1 s.
     *
     * @param url the server's URL
     * @return the validated options
     * @throws IllegalArgumentException if {@code url} is not a valid URL
     */
    public static RemoteOptions of(String url) {
        return new RemoteOptions(url, DEFAULT_NAMESPACE, DEFAULT_TIMEOUT_NANOS, DEFAULT_CONNECT_TIMEOUT_NANOS, 0,
                RemoteEviction.SERVER, DEFAULT_LRU_CAPACITY_BLOCKS, DEFAULT_BREAKER_FAILURES,
                DEFAULT_BREAKER_OPEN_NANOS, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_RECONNECT_MAX_DELAY_NANOS);
    }

    /**
     * Connects a {@link RemoteStore} with these options: how the tier manager's builder opens the
     * remote tier ({@code KvBlockManager.builder(layout).remote(RemoteOptions.of(url))}).
     *
     * @param layoutFingerprint the layout's fingerprint
     * @return the open store
     * @throws RemoteUnavailableException if the first connection fails
     */
    @Override
    public BlockStore open(long layoutFingerprint) {
        return RemoteStore.open(this, layoutFingerprint);
    }

    /** {@return whether {@link #url()} names a cluster} */
    public boolean cluster() {
        return RemoteEndpoints.parse(url).cluster();
    }

    /**
     * Copies with another {@code url}.
     *
     * @param value the new URL
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withUrl(String value) {
        return new RemoteOptions(value, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code namespace}.
     *
     * @param value the new namespace
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withNamespace(String value) {
        return new RemoteOptions(url, value, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code timeoutNanos}.
     *
     * @param value the new call timeout in nanoseconds
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withTimeoutNanos(long value) {
        return new RemoteOptions(url, namespace, value, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code connectTimeoutNanos}.
     *
     * @param value the new connect timeout in nanoseconds
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withConnectTimeoutNanos(long value) {
        return new RemoteOptions(url, namespace, timeoutNanos, value, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code ttlSeconds}.
     *
     * @param value the new TTL in seconds, 0 for none
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withTtlSeconds(long value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, value, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code eviction}.
     *
     * @param value who evicts
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withEviction(RemoteEviction value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, value,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code lruCapacityBlocks}.
     *
     * @param value the owned LRU's capacity in blocks
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withLruCapacityBlocks(long value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                value, breakerFailures, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code breakerFailures}.
     *
     * @param value consecutive failures that open the breaker
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withBreakerFailures(int value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, value, breakerOpenNanos, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code breakerOpenNanos}.
     *
     * @param value the breaker's back-off in nanoseconds
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withBreakerOpenNanos(long value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, value, maxInFlightBytes, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code maxInFlightBytes}.
     *
     * @param value the bound on unanswered write bytes
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withMaxInFlightBytes(long value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, value, reconnectMaxDelayNanos);
    }

    /**
     * Copies with another {@code reconnectMaxDelayNanos}.
     *
     * @param value the longest reconnect delay in nanoseconds
     * @return a validated copy
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RemoteOptions withReconnectMaxDelayNanos(long value) {
        return new RemoteOptions(url, namespace, timeoutNanos, connectTimeoutNanos, ttlSeconds, eviction,
                lruCapacityBlocks, breakerFailures, breakerOpenNanos, maxInFlightBytes, value);
    }
}
