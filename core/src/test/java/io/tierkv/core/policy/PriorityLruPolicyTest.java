package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PriorityLruPolicyTest extends EvictionPolicyContract {

    @Override
    EvictionPolicy create(int capacity) {
        return new PriorityLruPolicy(capacity);
    }

    @Override
    String expectedName() {
        return "priority-lru";
    }

    @Override
    ReferencePolicy reference(int capacity) {
        return new ReferencePriorityLru(PriorityLruPolicy.DEFAULT_LEVELS);
    }

    @Test
    void lowerPrioritiesLeaveFirstAndLruOrdersEachPriority() {
        EvictionPolicy p = create(8);
        p.onAdmit(0, 2);
        p.onAdmit(1, 0);
        p.onAdmit(2, 1);
        p.onAdmit(3, 0);
        p.onAdmit(4, 2);
        p.onAccess(1);
        p.onAccess(0);
        assertArrayEquals(new int[] {3, 1, 2, 4, 0}, drain(p));
    }

    @Test
    void aHighPriorityBlockOutlivesAnyAmountOfLowPriorityTraffic() {
        EvictionPolicy p = create(100);
        p.onAdmit(0, 5); // a system prompt, never accessed again
        for (int round = 0; round < 1_000; round++) {
            int id = 1 + round % 99;
            if (p.contains(id)) {
                p.onAccess(id);
            } else {
                if (p.size() == 10) {
                    int v = p.victim();
                    assertTrue(v != 0, "the priority-5 block was named at round " + round);
                    p.onRemove(v);
                }
                p.onAdmit(id, 0);
            }
        }
        assertTrue(p.contains(0));
    }

    @Test
    void prioritiesOutsideTheLevelsAreClamped() {
        PriorityLruPolicy p = new PriorityLruPolicy(8, 4);
        p.onAdmit(0, 1_000);
        p.onAdmit(1, -7);
        p.onAdmit(2, 3);
        assertEquals(3, p.priorityOf(0));
        assertEquals(0, p.priorityOf(1));
        assertEquals(-1, p.priorityOf(5));
        assertEquals(3, p.levelOf(Integer.MAX_VALUE));
        assertEquals(0, p.levelOf(Integer.MIN_VALUE));
        assertArrayEquals(new int[] {1, 0, 2}, drain(p)); // 0 and 2 share level 3: LRU
    }

    @Test
    void levelsAreValidated() {
        var e = assertThrows(IllegalArgumentException.class, () -> new PriorityLruPolicy(8, 65));
        assertEquals("levels: 65 (expected 1..64)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PriorityLruPolicy(8, 0));
    }

    @Test
    void matchesItsReferenceWithFewLevels() {
        for (long seed : new long[] {3L, 77L}) {
            Differential.run(seed, 40, 5_000, new PriorityLruPolicy(40, 2), new ReferencePriorityLru(2));
        }
    }

    /** Priority-then-LRU as a sorted map of access-ordered sets. */
    static final class ReferencePriorityLru implements ReferencePolicy {
        private final int levels;
        private final TreeMap<Integer, LinkedHashSet<Integer>> byLevel = new TreeMap<>();
        private final Map<Integer, Integer> levelOf = new HashMap<>();

        ReferencePriorityLru(int levels) {
            this.levels = levels;
        }

        @Override
        public void admit(int id, int priority, long key) {
            int level = Math.min(levels - 1, Math.max(0, priority));
            levelOf.put(id, level);
            byLevel.computeIfAbsent(level, l -> new LinkedHashSet<>()).add(id);
        }

        @Override
        public void access(int id) {
            Integer level = levelOf.get(id);
            if (level != null) {
                byLevel.get(level).remove(id);
                byLevel.get(level).add(id);
            }
        }

        @Override
        public void remove(int id) {
            Integer level = levelOf.remove(id);
            if (level != null) {
                byLevel.get(level).remove(id);
                if (byLevel.get(level).isEmpty()) {
                    byLevel.remove(level);
                }
            }
        }

        @Override
        public int victim() {
            return byLevel.isEmpty() ? -1 : byLevel.firstEntry().getValue().getFirst();
        }

        @Override
        public boolean contains(int id) {
            return levelOf.containsKey(id);
        }

        @Override
        public int size() {
            return levelOf.size();
        }
    }
}
