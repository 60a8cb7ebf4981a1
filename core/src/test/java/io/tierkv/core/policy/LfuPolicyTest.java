package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LfuPolicyTest extends EvictionPolicyContract {

    @Override
    EvictionPolicy create(int capacity) {
        return new LfuPolicy(capacity);
    }

    @Override
    String expectedName() {
        return "lfu";
    }

    @Override
    ReferencePolicy reference(int capacity) {
        return new ReferenceLfu(LfuPolicy.DEFAULT_MAX_COUNT, 10L * capacity);
    }

    @Test
    void theLeastFrequentLeavesFirstAndRecencyBreaksTies() {
        LfuPolicy p = new LfuPolicy(8);
        for (int id = 0; id < 4; id++) {
            p.onAdmit(id, 0);
        }
        p.onAccess(2);
        p.onAccess(2);
        p.onAccess(2);
        p.onAccess(0);
        assertEquals(4, p.frequency(2));
        assertEquals(2, p.frequency(0));
        assertEquals(1, p.frequency(1));
        assertArrayEquals(new int[] {1, 3, 0, 2}, drain(p));
    }

    @Test
    void countsSaturateAtMaxCount() {
        LfuPolicy p = new LfuPolicy(4, 3, 1_000);
        p.onAdmit(0, 0);
        for (int i = 0; i < 10; i++) {
            p.onAccess(0);
        }
        assertEquals(3, p.frequency(0));
    }

    @Test
    void agingHalvesEveryCountSoOldPopularityFades() {
        LfuPolicy p = new LfuPolicy(8, 15, 8);
        p.onAdmit(0, 0);
        p.onAdmit(1, 0);
        for (int i = 0; i < 7; i++) {
            p.onAccess(0); // 0: 1 -> 8 after 7 accesses
        }
        assertEquals(8, p.frequency(0));
        assertEquals(1, p.frequency(1));
        p.onAccess(5); // 8th access: a non-candidate counts too, and every count halves
        assertEquals(4, p.frequency(0));
        assertEquals(0, p.frequency(1));
        assertEquals(0, p.frequency(5));
        for (int i = 0; i < 8; i++) {
            p.onAccess(1); // 1: 0 -> 8, halved to 4 on the 8th access; 0 halves to 2
        }
        assertEquals(2, p.frequency(0));
        assertEquals(4, p.frequency(1));
        assertArrayEquals(new int[] {0, 1}, drain(p));
    }

    @Test
    void evictionForgetsTheCountButOtherRemovalsKeepIt() {
        LfuPolicy p = new LfuPolicy(8);
        p.onAdmit(0, 0);
        p.onAdmit(1, 0);
        p.onAccess(0);
        p.onAccess(0);
        p.onAccess(1);
        p.onRemove(0); // re-referenced, not evicted
        assertEquals(3, p.frequency(0));
        p.onAdmit(0, 0);
        assertEquals(1, p.victim());
        p.onRemove(1); // evicted
        assertEquals(0, p.frequency(1));
        p.onAdmit(1, 0);
        assertEquals(1, p.frequency(1)); // admission raises 0 to 1
        assertEquals(1, p.victim());
    }

    @Test
    void parametersAreValidated() {
        assertEquals("maxCount: 32 (expected 1..31)",
                assertThrows(IllegalArgumentException.class, () -> new LfuPolicy(8, 32, 10)).getMessage());
        assertEquals("agingPeriodAccesses: 0 (expected > 0)",
                assertThrows(IllegalArgumentException.class, () -> new LfuPolicy(8, 15, 0)).getMessage());
        assertEquals(80L, new LfuPolicy(8).agingPeriodAccesses());
    }

    @Test
    void matchesItsReferenceWithFrequentAging() {
        for (long seed : new long[] {5L, 11L, 2024L}) {
            Differential.run(seed, 30, 6_000, new LfuPolicy(30, 7, 13), new ReferenceLfu(7, 13));
        }
    }

    /**
     * LFU with eager aging: a count per id in a map, halved for every id at once, and one plain
     * linked list per count, merged pairwise (2g then 2g + 1) on aging.
     */
    static final class ReferenceLfu implements ReferencePolicy {
        private final int maxCount;
        private final long period;
        private final Map<Integer, Integer> count = new HashMap<>();
        private final Set<Integer> candidates = new HashSet<>();
        private List<LinkedList<Integer>> buckets = new ArrayList<>();
        private long accesses;
        private int lastVictim = -1;

        ReferenceLfu(int maxCount, long period) {
            this.maxCount = maxCount;
            this.period = period;
            for (int c = 0; c <= maxCount; c++) {
                buckets.add(new LinkedList<>());
            }
        }

        private int count(int id) {
            return count.getOrDefault(id, 0);
        }

        @Override
        public void admit(int id, int priority, long key) {
            int c = Math.max(1, count(id));
            count.put(id, c);
            candidates.add(id);
            buckets.get(c).addLast(id);
        }

        @Override
        public void access(int id) {
            int c = count(id);
            int n = Math.min(maxCount, c + 1);
            count.put(id, n);
            if (candidates.contains(id)) {
                buckets.get(c).remove((Integer) id);
                buckets.get(n).addLast(id);
            }
            if (++accesses >= period) {
                accesses = 0;
                count.replaceAll((k, v) -> v / 2);
                List<LinkedList<Integer>> aged = new ArrayList<>();
                for (int g = 0; g <= maxCount; g++) {
                    LinkedList<Integer> list = new LinkedList<>();
                    if (2 * g <= maxCount) {
                        list.addAll(buckets.get(2 * g));
                    }
                    if (2 * g + 1 <= maxCount) {
                        list.addAll(buckets.get(2 * g + 1));
                    }
                    aged.add(list);
                }
                buckets = aged;
            }
        }

        @Override
        public void remove(int id) {
            boolean evicted = id == lastVictim;
            if (evicted) {
                lastVictim = -1;
            }
            if (candidates.remove(id)) {
                buckets.get(count(id)).remove((Integer) id);
            }
            if (evicted) {
                count.put(id, 0);
            }
        }

        @Override
        public int victim() {
            lastVictim = -1;
            for (LinkedList<Integer> b : buckets) {
                if (!b.isEmpty()) {
                    lastVictim = b.getFirst();
                    break;
                }
            }
            return lastVictim;
        }

        @Override
        public boolean contains(int id) {
            return candidates.contains(id);
        }

        @Override
        public int size() {
            return candidates.size();
        }
    }
}
