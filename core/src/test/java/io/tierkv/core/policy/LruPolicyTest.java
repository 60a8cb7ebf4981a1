package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.LinkedHashMap;
import org.junit.jupiter.api.Test;

class LruPolicyTest extends EvictionPolicyContract {

    @Override
    EvictionPolicy create(int capacity) {
        return new LruPolicy(capacity);
    }

    @Override
    String expectedName() {
        return "lru";
    }

    @Override
    ReferencePolicy reference(int capacity) {
        return new ReferenceLru();
    }

    @Test
    void theLeastRecentlyUsedLeavesFirst() {
        EvictionPolicy p = create(8);
        for (int id = 0; id < 5; id++) {
            p.onAdmit(id, 0);
        }
        p.onAccess(1);
        p.onAccess(3);
        p.onAccess(1);
        assertArrayEquals(new int[] {0, 2, 4, 3, 1}, drain(p));
    }

    @Test
    void aReadmittedBlockIsTheMostRecent() {
        EvictionPolicy p = create(8);
        p.onAdmit(0, 0);
        p.onAdmit(1, 0);
        p.onAdmit(2, 0);
        p.onRemove(0); // re-referenced, say
        p.onAdmit(0, 0);
        assertArrayEquals(new int[] {1, 2, 0}, drain(p));
    }

    /** LRU as java.util knows it: a LinkedHashMap in access order. */
    static final class ReferenceLru implements ReferencePolicy {
        private final LinkedHashMap<Integer, Boolean> map = new LinkedHashMap<>(16, 0.75f, true);

        @Override
        public void admit(int id, int priority, long key) {
            map.put(id, Boolean.TRUE);
        }

        @Override
        public void access(int id) {
            map.get(id);
        }

        @Override
        public void remove(int id) {
            map.remove(id);
        }

        @Override
        public int victim() {
            return map.isEmpty() ? -1 : map.keySet().iterator().next();
        }

        @Override
        public boolean contains(int id) {
            return map.containsKey(id);
        }

        @Override
        public int size() {
            return map.size();
        }
    }
}
