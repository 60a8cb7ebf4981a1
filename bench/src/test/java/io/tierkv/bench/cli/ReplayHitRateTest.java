package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.bench.trace.TraceRequest;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.testing.SharedData;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Hit rates of {@code tierkv replay} on the two published Mooncake traces against references
 * computed here, independently of the manager, exactly (token counts, not rounded rates).
 *
 * <p>Runs single tier ({@code --single-tier --payload none --max-decode-tokens 0}) with the
 * smallest layout (1 layer, 1 head, head dim 1, INT8: 1 KiB per 512-token block) so the
 * manager's work is metadata and the runs fit the time budget. The finite-capacity cases use
 * a prefix of each trace (conversation: first 3,000 of 12,031 requests; synthetic: first 1,500
 * of 3,993), since every capacity is a whole replay.
 */
class ReplayHitRateTest {

    private static final int B = 512;
    private static final KvLayout LAYOUT = KvLayout.of(1, 1, 1, DType.INT8, B);

    private static List<TraceRequest> load(String name, int limit) {
        Path file = SharedData.require("traces/mooncake-fast25/" + name);
        return TraceInput.load(file, TraceInput.Format.MOONCAKE, B, limit, 0).requests();
    }

    private static ReplayReport replay(List<TraceRequest> requests, long deviceBlocks) {
        return new Replayer(ReplayConfig.singleTier(LAYOUT, deviceBlocks)).run(requests, B, "test", "mooncake",
                Progress.none());
    }

    /** Creates the test. */
    ReplayHitRateTest() {
    }

    /**
     * Infinite capacity: a request hits its longest leading run of ids seen before, capped at its length.
     *
     * @param requests the requests
     * @return hit tokens
     */
    static long referenceInfinite(List<TraceRequest> requests) {
        return referenceInfinite(requests, B);
    }

    /**
     * Infinite capacity at a block size.
     *
     * @param requests the requests
     * @param b        the trace's block size
     * @return hit tokens
     */
    static long referenceInfinite(List<TraceRequest> requests, int b) {
        Set<Long> seen = new HashSet<>();
        long hit = 0;
        for (TraceRequest r : requests) {
            int m = 0;
            while (m < r.blockCount() && seen.contains(r.blockHash(m))) {
                m++;
            }
            hit += Math.min((long) m * b, r.inputLength());
            for (int i = 0; i < r.blockCount(); i++) {
                seen.add(r.blockHash(i));
            }
        }
        return hit;
    }

    /**
     * A plain LRU prefix store of {@code capacity} blocks, with the rules of a paged prefix cache
     * that runs one request at a time:
     * <ol>
     *   <li>lookup: the request hits its longest leading run of cached ids; those blocks are in
     *       use (not evictable) until the request ends;
     *   <li>each remaining block takes a slot when the request reaches it, evicting the least
     *       recently used cached block not in use when the store is full; the block then holds its
     *       id unless that id is already cached (a later block of a chain whose head was evicted:
     *       the new copy is kept only while the request runs, and the cached one is not touched);
     *   <li>when the request ends, its hit and newly cached blocks become the most recently used,
     *       in prompt order.
     * </ol>
     *
     * @param requests the requests
     * @param capacity blocks
     * @return hit tokens
     */
    static long referenceLru(List<TraceRequest> requests, int capacity) {
        LinkedHashSet<Long> cached = new LinkedHashSet<>(); // not in use, oldest first
        long hit = 0;
        for (TraceRequest r : requests) {
            int k = r.blockCount();
            int m = 0;
            while (m < k && cached.contains(r.blockHash(m))) {
                m++;
            }
            Set<Long> inUse = new HashSet<>();
            for (int i = 0; i < m; i++) {
                cached.remove(r.blockHash(i));
                inUse.add(r.blockHash(i));
            }
            int held = m;
            boolean[] keeps = new boolean[k];
            for (int i = m; i < k; i++) {
                if (held + cached.size() >= capacity) {
                    Long oldest = cached.iterator().next(); // capacity > blocks per request: never empty here
                    cached.remove(oldest);
                }
                held++;
                long id = r.blockHash(i);
                keeps[i] = !cached.contains(id) && !inUse.contains(id);
                if (keeps[i]) {
                    inUse.add(id);
                }
            }
            hit += Math.min((long) m * B, r.inputLength());
            for (int i = 0; i < k; i++) {
                if (i < m || keeps[i]) {
                    cached.add(r.blockHash(i));
                }
            }
        }
        return hit;
    }

    private static int maxBlocks(List<TraceRequest> requests) {
        return requests.stream().mapToInt(TraceRequest::blockCount).max().orElse(0);
    }

    private static long distinct(List<TraceRequest> requests) {
        Set<Long> ids = new HashSet<>();
        requests.forEach(r -> {
            for (int i = 0; i < r.blockCount(); i++) {
                ids.add(r.blockHash(i));
            }
        });
        return ids.size();
    }

    private void infinite(String trace, double paperCeiling) {
        List<TraceRequest> requests = load(trace, -1);
        long expected = referenceInfinite(requests);
        ReplayReport r = replay(requests, distinct(requests) + maxBlocks(requests) + 1);
        assertEquals(expected, r.hitTokens(), trace + ": hit tokens vs the seen-id set");
        assertEquals(r.hitRate(), r.ceilingHitRate(), 0.0, "replay's own ceiling");
        assertEquals(0, r.rejectedRequests());
        assertEquals(0, r.events().evictions(), "infinite capacity never evicts");
        assertEquals(List.of(), r.invariantViolations());
        // The token-weighted ceiling sits a few points under the paper's Table 2 cache ratio.
        assertTrue(Math.abs(r.hitRate() - paperCeiling) < 0.05, trace + ": " + r.hitRate() + " vs " + paperCeiling);
    }

    /** Exact equality. */
    @Test
    void conversationInfiniteCapacityEqualsSeenSet() {
        infinite("conversation_trace.jsonl", 0.40);
    }

    /** Exact equality. */
    @Test
    void syntheticInfiniteCapacityEqualsSeenSet() {
        infinite("synthetic_trace.jsonl", 0.66);
    }

    private void lru(String trace, int limit, long... capacityTokens) {
        List<TraceRequest> requests = load(trace, limit);
        int most = maxBlocks(requests);
        for (long tokens : capacityTokens) {
            int capacity = (int) (tokens / B);
            assertTrue(capacity > most, "capacity " + capacity + " must exceed the largest request, " + most);
            long expected = referenceLru(requests, capacity);
            ReplayReport r = replay(requests, capacity);
            assertEquals(expected, r.hitTokens(), trace + " LRU at " + capacity + " blocks");
            assertEquals(0, r.rejectedRequests());
            assertTrue(r.events().evictions() > 0, "a finite capacity evicts");
            assertTrue(r.hitRate() < r.ceilingHitRate());
            assertEquals(List.of(), r.invariantViolations());
        }
    }

    /** Exact equality. */
    @Test
    void conversationLruEqualsReferenceLru() {
        lru("conversation_trace.jsonl", 3_000, 200_000, 1_000_000, 3_000_000);
    }

    /** Exact equality. */
    @Test
    void syntheticLruEqualsReferenceLru() {
        lru("synthetic_trace.jsonl", 1_500, 250_000, 1_000_000, 3_000_000);
    }
}
