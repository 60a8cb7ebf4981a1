package io.tierkv.core.cache;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.TestCaches;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Seeded random operations on a single-tier cache (open, match, append, fork, lease, close) with
 * every policy: invariants after every step, every byte read checked. Token ids are a function of
 * (document, position), so matched blocks must hold the document's bytes.
 */
class PagedKvCacheRandomTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @ParameterizedTest
    @ValueSource(strings = {"lru", "lfu", "fifo", "s3fifo", "sieve", "priority-lru"})
    void randomOperationsKeepEveryInvariantAndEveryByte(String policy) {
        PagedKvCache cache = TestCaches.singleTier(invariants, CacheOptions.of(TestCaches.smallLayout(4), 24)
                .withPolicy(policy).withAdmissionTimeoutNanos(0));
        long seed = policy.hashCode() * 31L + 7;
        Random rnd = new Random(seed);
        List<Sequence> open = new ArrayList<>();
        List<Integer> docs = new ArrayList<>();
        int hits = 0;
        for (int step = 0; step < 3_000; step++) {
            int op = rnd.nextInt(6);
            try {
                if (op <= 1 || open.isEmpty()) {
                    int doc = rnd.nextInt(10);
                    int len = 1 + rnd.nextInt(14);
                    int[] tokens = new int[len];
                    for (int i = 0; i < len; i++) {
                        tokens[i] = doc * 1000 + i;
                    }
                    Sequence s = cache.openSequence(SequenceOptions.defaults().withPriority(rnd.nextInt(3)));
                    open.add(s);
                    docs.add(doc);
                    int cached = s.matchPrefix(tokens);
                    hits += cached;
                    appendWritten(s, doc, java.util.Arrays.copyOfRange(tokens, cached, len));
                } else if (op == 2) {
                    int i = rnd.nextInt(open.size());
                    open.remove(i).close();
                    docs.remove(i);
                } else if (op == 3) {
                    int i = rnd.nextInt(open.size());
                    open.add(open.get(i).fork());
                    docs.add(docs.get(i));
                } else {
                    int i = rnd.nextInt(open.size());
                    Sequence s = open.get(i);
                    assertEquals(-1, firstMismatch(s, docs.get(i), 0, s.length()), "seed " + seed + " step " + step);
                }
            } catch (CapacityExhaustedException full) {
                assertEquals(1, full.requestedBlocks());
            }
            assertEquals(List.of(), cache.checkInvariants(), "seed " + seed + " step " + step + " op " + op);
        }
        open.forEach(Sequence::close);
        assertEquals(24, cache.diagnostics().availableBlocks(), "seed " + seed);
        assertTrue(hits > 0, "prefix matches happened (seed " + seed + ")");
    }
}
