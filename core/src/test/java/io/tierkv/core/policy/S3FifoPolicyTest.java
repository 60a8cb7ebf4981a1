package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.Map;
import org.junit.jupiter.api.Test;

class S3FifoPolicyTest extends EvictionPolicyContract {

    @Override
    EvictionPolicy create(int capacity) {
        return new S3FifoPolicy(capacity);
    }

    @Override
    String expectedName() {
        return "s3fifo";
    }

    @Override
    ReferencePolicy reference(int capacity) {
        return new ReferenceS3Fifo(capacity, S3FifoPolicy.DEFAULT_SMALL_RATIO);
    }

    @Test
    void oneHitWondersLeaveFirstAndAccessedMainBlocksGetASecondChance() {
        S3FifoPolicy p = new S3FifoPolicy(10);
        assertEquals(1, p.smallTarget());
        for (int id = 0; id < 10; id++) {
            p.onAdmit(id, 0);
        }
        for (int id = 0; id < 5; id++) {
            p.onAccess(id); // 0..4 are re-referenced once while in the small queue
        }
        assertEquals(5, p.victim()); // 0..4 moved to the main queue on the way
        assertEquals(5, p.smallSize());
        assertEquals(5, p.mainSize());
        p.onAccess(0); // a hit in the main queue
        assertArrayEquals(new int[] {5, 6, 7, 8, 9, 1, 2, 3, 4, 0}, drain(p));
        for (int id = 5; id < 10; id++) {
            assertTrue(p.inGhost(id), "small-queue victim " + id + " is remembered");
        }
        for (int id = 0; id < 5; id++) {
            assertFalse(p.inGhost(id), "main-queue victim " + id + " is not remembered");
        }
    }

    @Test
    void aBlockReturningFromTheGhostGoesToMainAndOutlivesANewcomer() {
        S3FifoPolicy p = new S3FifoPolicy(10);
        p.onAdmit(5, 0);
        assertEquals(5, p.victim());
        p.onRemove(5);
        assertTrue(p.inGhost(5));
        p.onAdmit(5, 0); // seen recently: straight to main, ghost entry consumed
        p.onAdmit(0, 0); // new: small
        assertFalse(p.inGhost(5));
        assertEquals(1, p.mainSize());
        assertEquals(1, p.smallSize());
        assertArrayEquals(new int[] {0, 5}, drain(p));
    }

    @Test
    void theGhostRemembersContentKeysNotBlockIds() {
        S3FifoPolicy p = new S3FifoPolicy(10);
        p.onAdmit(3, 0, 500L);
        p.onRemove(p.victim());
        assertTrue(p.inGhost(500L));
        assertFalse(p.inGhost(3L));
        p.onAdmit(3, 0, 3L); // id 3 reused for new content: small
        p.onAdmit(7, 0, 500L); // content 500 back under another id: main
        assertEquals(1, p.smallSize());
        assertEquals(1, p.mainSize());
        assertEquals(3, p.victim());
    }

    @Test
    void aRemovalThatIsNotAnEvictionLeavesNoGhost() {
        S3FifoPolicy p = new S3FifoPolicy(10);
        p.onAdmit(4, 0);
        p.onRemove(4); // re-referenced, never named as a victim
        assertFalse(p.inGhost(4));
    }

    @Test
    void theGhostHoldsAsManyKeysAsTheMainQueueAndForgetsTheOldest() {
        S3FifoPolicy p = new S3FifoPolicy(10); // small target 1, ghost 9
        for (long key = 100; key < 120; key++) {
            p.onAdmit(0, 0, key);
            p.onRemove(p.victim());
        }
        for (long key = 100; key < 111; key++) {
            assertFalse(p.inGhost(key), "key " + key);
        }
        for (long key = 111; key < 120; key++) {
            assertTrue(p.inGhost(key), "key " + key);
        }
    }

    @Test
    void smallRatioIsValidated() {
        assertEquals("smallRatio: 1.0 (expected in (0, 1))",
                assertThrows(IllegalArgumentException.class, () -> new S3FifoPolicy(10, 1.0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> new S3FifoPolicy(10, 0.0));
        assertThrows(IllegalArgumentException.class, () -> new S3FifoPolicy(10, Double.NaN));
        assertEquals(25, new S3FifoPolicy(100, 0.25).smallTarget());
    }

    @Test
    void matchesItsReferenceWithALargeSmallQueue() {
        for (long seed : new long[] {8L, 13L}) {
            Differential.run(seed, 20, 6_000, new S3FifoPolicy(20, 0.4), new ReferenceS3Fifo(20, 0.4));
        }
    }

    /** S3-FIFO with linked lists, maps and a deque of (key, sequence) ghost entries. */
    static final class ReferenceS3Fifo implements ReferencePolicy {
        private final int smallTarget;
        private final int ghostSize;
        private final LinkedList<Integer> small = new LinkedList<>();
        private final LinkedList<Integer> main = new LinkedList<>();
        private final Map<Integer, LinkedList<Integer>> queueOf = new HashMap<>();
        private final Map<Integer, Integer> freq = new HashMap<>();
        private final Map<Integer, Long> keyOf = new HashMap<>();
        private final ArrayDeque<long[]> ghostRing = new ArrayDeque<>();
        private final Map<Long, Long> ghost = new HashMap<>();
        private long seq;
        private int lastVictim = -1;

        ReferenceS3Fifo(int capacity, double smallRatio) {
            smallTarget = (int) Math.max(1, Math.round(smallRatio * capacity));
            ghostSize = Math.max(1, capacity - smallTarget);
        }

        @Override
        public void admit(int id, int priority, long key) {
            keyOf.put(id, key);
            LinkedList<Integer> q = ghost.remove(key) != null ? main : small;
            q.addLast(id);
            queueOf.put(id, q);
        }

        @Override
        public void access(int id) {
            if (queueOf.containsKey(id)) {
                freq.merge(id, 1, (a, b) -> Math.min(S3FifoPolicy.MAX_FREQ, a + b));
            }
        }

        @Override
        public void remove(int id) {
            boolean evicted = id == lastVictim;
            if (evicted) {
                lastVictim = -1;
            }
            LinkedList<Integer> q = queueOf.remove(id);
            if (q == null) {
                return;
            }
            q.remove((Integer) id);
            if (evicted) {
                freq.put(id, 0);
                if (q == small) {
                    if (ghostRing.size() == ghostSize) {
                        long[] old = ghostRing.pollFirst();
                        if (ghost.getOrDefault(old[0], -1L) == old[1]) {
                            ghost.remove(old[0]);
                        }
                    }
                    long key = keyOf.get(id);
                    ghostRing.addLast(new long[] {key, seq});
                    ghost.put(key, seq++);
                }
            }
        }

        @Override
        public int victim() {
            while (true) {
                if (small.isEmpty() && main.isEmpty()) {
                    lastVictim = -1;
                    return -1;
                }
                if (!small.isEmpty() && (small.size() >= smallTarget || main.isEmpty())) {
                    int t = small.getFirst();
                    if (freq.getOrDefault(t, 0) >= 1) {
                        small.removeFirst();
                        freq.put(t, 0);
                        main.addLast(t);
                        queueOf.put(t, main);
                        continue;
                    }
                    lastVictim = t;
                    return t;
                }
                int t = main.getFirst();
                int f = freq.getOrDefault(t, 0);
                if (f > 0) {
                    freq.put(t, f - 1);
                    main.addLast(main.removeFirst());
                    continue;
                }
                lastVictim = t;
                return t;
            }
        }

        @Override
        public boolean contains(int id) {
            return queueOf.containsKey(id);
        }

        @Override
        public int size() {
            return queueOf.size();
        }
    }
}
