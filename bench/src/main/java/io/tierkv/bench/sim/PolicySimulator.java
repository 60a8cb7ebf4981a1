package io.tierkv.bench.sim;

import io.tierkv.bench.trace.TraceRequest;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.policy.EvictionPolicy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Replays a trace's prompt blocks through eviction policies at several capacities, metadata only
 * (no bytes move), with Belady's optimal policy as the baseline.
 *
 * <p><b>Hit rate.</b> Each request's prompt blocks are first looked up in order: block {@code i}
 * is a hit only if it is cached <em>and</em> blocks {@code 0..i-1} of the same request were hits
 * (prefix caching: a runtime reuses a cached prefix and recomputes everything after the first
 * miss). Then every block of the request is used in order: a cached block is an access for the
 * policy ({@link EvictionPolicy#onAccess}), a missing one is admitted ({@link EvictionPolicy#onAdmit}),
 * evicting the policy's victim first when the cache is full. The hit rate is hits over block
 * lookups, every block (the partial last block too) counting once; it is not weighted by tokens.
 * A request's own blocks are not protected while it is replayed.
 *
 * <p><b>Capacity</b> is in blocks (tokens divided by the trace's block size, 512 for Mooncake: 1e6
 * tokens is 1953 blocks). A capacity at or above the trace's distinct block count never evicts,
 * so it gives the infinite-capacity hit rate: the share of lookups whose whole prefix was seen
 * before.
 *
 * <p><b>Policies.</b> Any {@link EvictionPolicies#names() registered} name, each created with the
 * capacity as its id range: cache slots {@code [0, capacity)} are the policy's block ids, reused
 * after eviction, with the block's content id as the content key (as a block pool with recycled
 * ids would use them). {@code priority-lru} receives a retention priority by prefix depth, so
 * shallow blocks, shared by more requests, are kept longer: {@code max(0, 7 - floor(log2(i + 1)))}
 * for block index {@code i} (7 for block 0, 6 for blocks 1 and 2, 0 from block 127 on). Two baselines are not policies:
 * <ul>
 *   <li>{@value #BELADY}: Belady's MIN, which evicts the block whose next use is farthest, and
 *       does not keep a missed block whose next use is farther than every cached block's. It
 *       maximises hits for the access sequence; since a block is always used right after its
 *       parent, it never keeps a block without its parent, so its prefix hits equal its hits and
 *       bound every policy's. It is always run, first at each capacity.
 *   <li>{@value #RANDOM}: evicts a uniformly random cached block, drawn from a
 *       {@link SplittableRandom} seeded with the given seed for each capacity; run when asked.
 * </ul>
 *
 * <p><b>Accounting.</b> After each run the simulator checks that hits + misses == lookups, that
 * the cache holds at most its capacity, that the policy's candidate count equals the cached
 * blocks, and that every cached block is a candidate; a violation is an {@link IllegalStateException}
 * naming the policy and capacity. Runs are sequential and deterministic: equal inputs and seed
 * give equal results. Thread-safe (no shared state).
 *
 * <p>Sources: L. A. Belady, "A study of replacement algorithms for a virtual-storage computer",
 * IBM Systems Journal 5(2), 1966; the simulator's shape (policies by name, a fixed seed, an
 * optimal baseline) follows Caffeine's simulator ({@code simulator/.../policy/opt/ClairvoyantPolicy});
 * the prefix-hit definition follows the Mooncake paper's cache-capacity analysis (Qin et al.,
 * FAST'25, Figure 9).
 */
public final class PolicySimulator {

    /** Name of the optimal baseline, Belady's MIN. */
    public static final String BELADY = "belady";
    /** Name of the random-eviction baseline. */
    public static final String RANDOM = "random";
    /** Seed used when none is given. */
    public static final long DEFAULT_SEED = 42L;

    private PolicySimulator() {
    }

    /**
     * Every name {@link #run} accepts: the registered policies, then {@value #BELADY} and
     * {@value #RANDOM}.
     *
     * @return an immutable list of names
     */
    public static List<String> policyNames() {
        List<String> names = new ArrayList<>(EvictionPolicies.names());
        names.add(BELADY);
        names.add(RANDOM);
        return List.copyOf(names);
    }

    /**
     * Simulates with seed {@value #DEFAULT_SEED}.
     *
     * @param trace            requests in arrival order
     * @param policies         names from {@link #policyNames()}, no repeats; {@value #BELADY} is
     *                         added if absent
     * @param capacitiesBlocks capacities in blocks, each {@code > 0}
     * @return one row per capacity and policy
     * @throws IllegalArgumentException if a name is unknown or repeated, no capacity is given or
     *                                  one is not positive
     * @throws IllegalStateException if a run's accounting does not add up (a policy bug)
     */
    public static SimulationResult run(List<TraceRequest> trace, List<String> policies, long[] capacitiesBlocks) {
        return run(trace, policies, capacitiesBlocks, DEFAULT_SEED);
    }

    /**
     * Simulates every policy at every capacity, Belady's MIN first at each capacity.
     *
     * @param trace            requests in arrival order
     * @param policies         names from {@link #policyNames()}, no repeats; {@value #BELADY} is
     *                         added if absent
     * @param capacitiesBlocks capacities in blocks, each {@code > 0}
     * @param seed             seed of the {@value #RANDOM} baseline
     * @return one row per capacity and policy
     * @throws IllegalArgumentException if a name is unknown or repeated, no capacity is given or
     *                                  one is not positive
     * @throws IllegalStateException if a run's accounting does not add up (a policy bug)
     */
    public static SimulationResult run(List<TraceRequest> trace, List<String> policies, long[] capacitiesBlocks,
            long seed) {
        List<String> order = checkPolicies(policies);
        checkCapacities(capacitiesBlocks);
        BlockTrace t = BlockTrace.of(trace);
        List<SimulationResult.Row> rows = new ArrayList<>();
        for (long capacity : capacitiesBlocks) {
            int slots = (int) Math.max(1, Math.min(capacity, t.distinct));
            for (String name : order) {
                long hits = switch (name) {
                    case BELADY -> belady(t, slots);
                    case RANDOM -> random(t, slots, new SplittableRandom(seed));
                    default -> policy(t, name, slots);
                };
                long accesses = t.accesses();
                rows.add(new SimulationResult.Row(name, capacity, accesses, hits,
                        accesses == 0 ? 0.0 : (double) hits / accesses));
            }
        }
        return new SimulationResult(t.requests, t.accesses(), t.distinct, rows);
    }

    private static List<String> checkPolicies(List<String> policies) {
        List<String> valid = policyNames();
        List<String> order = new ArrayList<>();
        order.add(BELADY);
        List<String> seen = new ArrayList<>();
        for (String p : policies) {
            if (!valid.contains(p)) {
                throw new IllegalArgumentException(
                        "policy: '" + p + "' is not known (valid: " + String.join(", ", valid) + ")");
            }
            if (seen.contains(p)) {
                throw new IllegalArgumentException("policy: '" + p + "' is listed twice");
            }
            seen.add(p);
            if (!p.equals(BELADY)) {
                order.add(p);
            }
        }
        return order;
    }

    private static void checkCapacities(long[] capacities) {
        if (capacities.length == 0) {
            throw new IllegalArgumentException("capacitiesBlocks: empty (expected at least one capacity)");
        }
        for (int i = 0; i < capacities.length; i++) {
            if (capacities[i] <= 0) {
                throw new IllegalArgumentException(
                        "capacitiesBlocks[" + i + "]: " + capacities[i] + " (expected > 0)");
            }
        }
    }

    /**
     * The retention priority {@code priority-lru} gets for a block at a prefix depth.
     *
     * @param blockIndex the block's index in its request, {@code >= 0}
     * @return {@code max(0, 7 - floor(log2(blockIndex + 1)))}
     */
    public static int priorityOf(int blockIndex) {
        return Math.max(0, 7 - (31 - Integer.numberOfLeadingZeros(blockIndex + 1)));
    }

    /** Counts the prefix hits of request r against a residency test. */
    private interface Resident {
        boolean test(int content);
    }

    private static long lookups(BlockTrace t, int r, Resident resident) {
        long hits = 0;
        for (int a = t.start[r]; a < t.start[r + 1]; a++) {
            if (!resident.test(t.content[a])) {
                break;
            }
            hits++;
        }
        return hits;
    }

    private static long policy(BlockTrace t, String name, int slots) {
        EvictionPolicy p = EvictionPolicies.create(name, slots);
        int[] slotOf = new int[t.distinct];
        Arrays.fill(slotOf, -1);
        int[] contentOf = new int[slots];
        int used = 0;
        long hits = 0;
        long misses = 0;
        for (int r = 0; r < t.requests; r++) {
            long h = lookups(t, r, c -> slotOf[c] >= 0);
            hits += h;
            misses += t.start[r + 1] - t.start[r] - h;
            for (int a = t.start[r]; a < t.start[r + 1]; a++) {
                int c = t.content[a];
                int s = slotOf[c];
                if (s >= 0) {
                    p.onAccess(s);
                    continue;
                }
                if (used == slots) {
                    s = p.victim();
                    if (s < 0 || s >= slots || slotOf[contentOf[s]] != s) {
                        throw new IllegalStateException(name + " at " + slots + " blocks: victim " + s
                                + " is not a cached block (" + used + " cached)");
                    }
                    p.onRemove(s);
                    slotOf[contentOf[s]] = -1;
                } else {
                    s = used++;
                }
                slotOf[c] = s;
                contentOf[s] = c;
                p.onAdmit(s, priorityOf(a - t.start[r]), c);
            }
        }
        checkAccounting(name, slots, t, hits, misses, used, p.size());
        for (int s = 0; s < used; s++) {
            if (!p.contains(s) || slotOf[contentOf[s]] != s) {
                throw new IllegalStateException(name + " at " + slots + " blocks: cached slot " + s
                        + " is not a candidate of the policy");
            }
        }
        return hits;
    }

    private static long belady(BlockTrace t, int slots) {
        OptimalCache cache = new OptimalCache(t.distinct, slots);
        long hits = 0;
        long misses = 0;
        for (int r = 0; r < t.requests; r++) {
            long h = lookups(t, r, cache::contains);
            hits += h;
            misses += t.start[r + 1] - t.start[r] - h;
            for (int a = t.start[r]; a < t.start[r + 1]; a++) {
                cache.access(t.content[a], t.nextUse[a]);
            }
        }
        checkAccounting(BELADY, slots, t, hits, misses, cache.size(), cache.size());
        return hits;
    }

    private static long random(BlockTrace t, int slots, SplittableRandom rnd) {
        int[] members = new int[slots];
        int[] indexOf = new int[t.distinct];
        Arrays.fill(indexOf, -1);
        int used = 0;
        long hits = 0;
        long misses = 0;
        for (int r = 0; r < t.requests; r++) {
            long h = lookups(t, r, c -> indexOf[c] >= 0);
            hits += h;
            misses += t.start[r + 1] - t.start[r] - h;
            for (int a = t.start[r]; a < t.start[r + 1]; a++) {
                int c = t.content[a];
                if (indexOf[c] >= 0) {
                    continue;
                }
                int i;
                if (used == slots) {
                    i = rnd.nextInt(slots);
                    indexOf[members[i]] = -1;
                } else {
                    i = used++;
                }
                members[i] = c;
                indexOf[c] = i;
            }
        }
        checkAccounting(RANDOM, slots, t, hits, misses, used, used);
        return hits;
    }

    private static void checkAccounting(String name, int slots, BlockTrace t, long hits, long misses,
            int cached, int candidates) {
        if (hits + misses != t.accesses() || hits < 0 || misses < 0) {
            throw new IllegalStateException(name + " at " + slots + " blocks: hits " + hits + " + misses "
                    + misses + " != lookups " + t.accesses());
        }
        if (cached > slots) {
            throw new IllegalStateException(name + " at " + slots + " blocks: " + cached + " blocks cached");
        }
        if (candidates != cached) {
            throw new IllegalStateException(name + " at " + slots + " blocks: policy holds " + candidates
                    + " candidates for " + cached + " cached blocks");
        }
    }
}
