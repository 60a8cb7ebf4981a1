package io.tierkv.core.policy;

import java.util.List;
import java.util.function.IntFunction;

/**
 * The registry of eviction policies by name.
 *
 * <table class="striped">
 *   <caption>Registered policies</caption>
 *   <thead><tr><th>name</th><th>class</th><th>leaves first</th></tr></thead>
 *   <tbody>
 *   <tr><td>{@code lru}</td><td>{@link LruPolicy}</td><td>least recently used</td></tr>
 *   <tr><td>{@code lfu}</td><td>{@link LfuPolicy}</td><td>least frequently used, counts halved
 *       periodically</td></tr>
 *   <tr><td>{@code fifo}</td><td>{@link FifoPolicy}</td><td>admitted longest ago</td></tr>
 *   <tr><td>{@code s3fifo}</td><td>{@link S3FifoPolicy}</td><td>one-hit wonders of the small
 *       queue, then unreferenced main-queue blocks</td></tr>
 *   <tr><td>{@code sieve}</td><td>{@link SievePolicy}</td><td>first unvisited block under the
 *       hand</td></tr>
 *   <tr><td>{@code priority-lru}</td><td>{@link PriorityLruPolicy}</td><td>lowest priority, LRU
 *       within it</td></tr>
 *   </tbody>
 * </table>
 *
 * <p>Every policy is created with its default parameters; construct the classes directly for
 * others. Thread-safe (the registry is immutable); the policies it creates are not.
 */
public final class EvictionPolicies {

    private record Entry(String name, IntFunction<EvictionPolicy> factory) {
    }

    private static final List<Entry> ENTRIES = List.of(
            new Entry("lru", LruPolicy::new),
            new Entry("lfu", LfuPolicy::new),
            new Entry("fifo", FifoPolicy::new),
            new Entry("s3fifo", S3FifoPolicy::new),
            new Entry("sieve", SievePolicy::new),
            new Entry("priority-lru", PriorityLruPolicy::new));

    private static final List<String> NAMES = ENTRIES.stream().map(Entry::name).toList();

    private EvictionPolicies() {
    }

    /**
     * The registered names, in a fixed order: {@code lru, lfu, fifo, s3fifo, sieve, priority-lru}.
     *
     * @return an immutable list of names
     */
    public static List<String> names() {
        return NAMES;
    }

    /**
     * Creates a new, empty policy.
     *
     * @param name     a registered name, exact and lower case (see {@link #names()})
     * @param capacity number of block ids the policy accepts, {@code [0, capacity)}; {@code > 0}
     * @return the policy, with its default parameters
     * @throws IllegalArgumentException if the name is not registered (the message lists the valid
     *                                  names) or the capacity is not positive
     * @throws NullPointerException if {@code name} is null
     */
    public static EvictionPolicy create(String name, int capacity) {
        java.util.Objects.requireNonNull(name, "name");
        for (Entry e : ENTRIES) {
            if (e.name().equals(name)) {
                return e.factory().apply(capacity);
            }
        }
        throw new IllegalArgumentException(
                "policy: '" + name + "' is not registered (valid: " + String.join(", ", NAMES) + ")");
    }
}
