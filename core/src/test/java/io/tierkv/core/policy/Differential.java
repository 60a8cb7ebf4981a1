package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;

/**
 * Drives a policy and its reference through the same seeded random operations and compares every
 * victim, size and membership; a mismatch fails with the seed, capacity and step so it can be
 * replayed.
 */
final class Differential {

    private Differential() {
    }

    static void run(long seed, int capacity, int steps, EvictionPolicy p, ReferencePolicy ref) {
        SplittableRandom rnd = new SplittableRandom(seed);
        // Keys from a small space, so that content returns under other ids (S3-FIFO ghost hits).
        int keySpace = Math.max(2, capacity * 2);
        boolean keyIsId = rnd.nextBoolean();
        int step = 0;
        try {
            for (; step < steps; step++) {
                int id = rnd.nextInt(capacity);
                int op = rnd.nextInt(10);
                if (op < 3) {
                    if (!ref.contains(id)) {
                        int prio = rnd.nextInt(4);
                        long key = keyIsId ? id : rnd.nextInt(keySpace);
                        ref.admit(id, prio, key);
                        if (keyIsId) {
                            p.onAdmit(id, prio);
                        } else {
                            p.onAdmit(id, prio, key);
                        }
                    }
                } else if (op < 6) {
                    ref.access(id);
                    p.onAccess(id);
                } else if (op < 7) {
                    ref.remove(id);
                    p.onRemove(id);
                } else {
                    int expected = ref.victim();
                    assertEquals(expected, p.victim(), "victim");
                    if (expected >= 0 && op < 9) {
                        ref.remove(expected);
                        p.onRemove(expected);
                    }
                }
                assertEquals(ref.size(), p.size(), "size");
                assertEquals(ref.contains(id), p.contains(id), "contains(" + id + ")");
            }
        } catch (AssertionError e) {
            throw new AssertionError(p.name() + " differs from its reference: seed " + seed
                    + ", capacity " + capacity + ", step " + step + ": " + e.getMessage(), e);
        }
    }
}
