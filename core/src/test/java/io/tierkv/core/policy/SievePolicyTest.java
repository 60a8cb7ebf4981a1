package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SievePolicyTest extends EvictionPolicyContract {

    @Override
    EvictionPolicy create(int capacity) {
        return new SievePolicy(capacity);
    }

    @Override
    String expectedName() {
        return "sieve";
    }

    @Override
    ReferencePolicy reference(int capacity) {
        return new ReferenceSieve();
    }

    @Test
    void theHandSparesVisitedBlocksAndDemotesNewcomersQuickly() {
        EvictionPolicy p = create(8);
        for (int id = 0; id < 5; id++) {
            p.onAdmit(id, 0);
        }
        p.onAccess(0);
        p.onAccess(2);
        assertEquals(1, p.victim()); // 0 spared (bit cleared), 1 unvisited
        p.onRemove(1);
        p.onAdmit(5, 0);
        p.onAccess(0);
        // The hand goes on from 2 (spared), so the newcomer 5 leaves before 2 and 0, which LRU
        // would order 3, 4, 2, 5, 0.
        assertArrayEquals(new int[] {3, 4, 5, 2, 0}, drain(p));
    }

    @Test
    void whenEveryBlockWasVisitedTheHandWrapsToTheOldest() {
        EvictionPolicy p = create(4);
        for (int id = 0; id < 3; id++) {
            p.onAdmit(id, 0);
            p.onAccess(id);
        }
        assertEquals(0, p.victim());
        assertArrayEquals(new int[] {0, 1, 2}, drain(p));
    }

    /** SIEVE over an array list (oldest first) and a hand index. */
    static final class ReferenceSieve implements ReferencePolicy {
        private final List<Integer> queue = new ArrayList<>();
        private final Set<Integer> visited = new HashSet<>();
        private int hand = -1;

        @Override
        public void admit(int id, int priority, long key) {
            queue.add(id);
            visited.remove(id);
        }

        @Override
        public void access(int id) {
            if (queue.contains(id)) {
                visited.add(id);
            }
        }

        @Override
        public void remove(int id) {
            int i = queue.indexOf(id);
            if (i < 0) {
                return;
            }
            if (hand > i) {
                hand--;
            } else if (hand == i && i == queue.size() - 1) {
                hand = -1;
            }
            queue.remove(i);
            visited.remove(id);
        }

        @Override
        public int victim() {
            if (queue.isEmpty()) {
                return -1;
            }
            int i = hand < 0 ? 0 : hand;
            while (visited.remove(queue.get(i))) {
                i = (i + 1) % queue.size();
            }
            hand = i;
            return queue.get(i);
        }

        @Override
        public boolean contains(int id) {
            return queue.contains(id);
        }

        @Override
        public int size() {
            return queue.size();
        }
    }
}
