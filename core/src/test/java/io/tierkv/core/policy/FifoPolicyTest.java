package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.LinkedHashSet;
import org.junit.jupiter.api.Test;

class FifoPolicyTest extends EvictionPolicyContract {

    @Override
    EvictionPolicy create(int capacity) {
        return new FifoPolicy(capacity);
    }

    @Override
    String expectedName() {
        return "fifo";
    }

    @Override
    ReferencePolicy reference(int capacity) {
        return new ReferenceFifo();
    }

    @Test
    void accessesDoNotChangeTheAdmissionOrder() {
        EvictionPolicy p = create(8);
        for (int id : new int[] {4, 0, 3, 1}) {
            p.onAdmit(id, 0);
        }
        p.onAccess(4);
        p.onAccess(4);
        p.onAccess(0);
        assertArrayEquals(new int[] {4, 0, 3, 1}, drain(p));
    }

    @Test
    void removalFromTheMiddleKeepsTheRestInOrder() {
        EvictionPolicy p = create(8);
        for (int id = 0; id < 5; id++) {
            p.onAdmit(id, 0);
        }
        p.onRemove(2);
        p.onRemove(0);
        assertArrayEquals(new int[] {1, 3, 4}, drain(p));
    }

    /** FIFO as an insertion-ordered set. */
    static final class ReferenceFifo implements ReferencePolicy {
        private final LinkedHashSet<Integer> set = new LinkedHashSet<>();

        @Override
        public void admit(int id, int priority, long key) {
            set.add(id);
        }

        @Override
        public void access(int id) {
        }

        @Override
        public void remove(int id) {
            set.remove(id);
        }

        @Override
        public int victim() {
            return set.isEmpty() ? -1 : set.getFirst();
        }

        @Override
        public boolean contains(int id) {
            return set.contains(id);
        }

        @Override
        public int size() {
            return set.size();
        }
    }
}
