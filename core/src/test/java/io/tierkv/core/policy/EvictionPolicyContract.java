package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * What every {@link EvictionPolicy} promises, whatever order it chooses: one subclass per policy
 * runs these, plus its own ordering tests and a differential test against a reference.
 */
abstract class EvictionPolicyContract {

    /** @return a new, empty policy of the kind under test */
    abstract EvictionPolicy create(int capacity);

    /** @return the registry name of the policy under test */
    abstract String expectedName();

    /** @return a reference implementation with the same ordering, built on java.util collections */
    abstract ReferencePolicy reference(int capacity);

    @Test
    void newPolicyHasNoCandidates() {
        EvictionPolicy p = create(8);
        assertEquals(0, p.size());
        assertEquals(-1, p.victim());
        for (int id = 0; id < 8; id++) {
            assertFalse(p.contains(id));
        }
    }

    @Test
    void nameAndCapacityMatchTheRegistry() {
        EvictionPolicy p = create(16);
        assertEquals(expectedName(), p.name());
        assertEquals(16, p.capacity());
        EvictionPolicy fromRegistry = EvictionPolicies.create(expectedName(), 16);
        assertSame(p.getClass(), fromRegistry.getClass());
        assertTrue(EvictionPolicies.names().contains(expectedName()));
    }

    @Test
    void zeroOrNegativeCapacityIsRejectedWithItsValue() {
        var e = assertThrows(IllegalArgumentException.class, () -> create(0));
        assertTrue(e.getMessage().contains("capacity: 0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> create(-3));
    }

    @Test
    void admittingACandidateTwiceIsACallerBug() {
        EvictionPolicy p = create(4);
        p.onAdmit(2, 0);
        var e = assertThrows(IllegalStateException.class, () -> p.onAdmit(2, 0));
        assertTrue(e.getMessage().contains("block 2"), e.getMessage());
        assertEquals(1, p.size());
    }

    @Test
    void idsOutsideTheRangeAreRejected() {
        EvictionPolicy p = create(4);
        for (int bad : new int[] {-1, 4, Integer.MAX_VALUE}) {
            assertThrows(IndexOutOfBoundsException.class, () -> p.onAdmit(bad, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> p.onAdmit(bad, 0, 7L));
            assertThrows(IndexOutOfBoundsException.class, () -> p.onAccess(bad));
            assertThrows(IndexOutOfBoundsException.class, () -> p.onRemove(bad));
            assertThrows(IndexOutOfBoundsException.class, () -> p.contains(bad));
        }
        assertEquals(0, p.size());
    }

    @Test
    void victimIsACandidateAndStaysTheSameUntilSomethingChanges() {
        EvictionPolicy p = create(8);
        for (int id = 0; id < 5; id++) {
            p.onAdmit(id, id % 3);
        }
        p.onAccess(3);
        int v = p.victim();
        assertTrue(p.contains(v));
        assertEquals(v, p.victim());
        assertEquals(5, p.size());
    }

    @Test
    void removingANonCandidateDoesNothing() {
        EvictionPolicy p = create(8);
        p.onAdmit(1, 0);
        p.onRemove(5);
        p.onRemove(5);
        assertEquals(1, p.size());
        assertEquals(1, p.victim());
    }

    @Test
    void accessingANonCandidateDoesNotAdmitIt() {
        EvictionPolicy p = create(8);
        p.onAccess(6);
        p.onAccess(6);
        assertFalse(p.contains(6));
        assertEquals(0, p.size());
        assertEquals(-1, p.victim());
    }

    @Test
    void drainingNamesEveryCandidateExactlyOnce() {
        long seed = 0x5EED_0001L;
        SplittableRandom rnd = new SplittableRandom(seed);
        int n = 200;
        EvictionPolicy p = create(n);
        for (int id : permutation(n, rnd)) {
            p.onAdmit(id, rnd.nextInt(4));
        }
        for (int i = 0; i < 3 * n; i++) {
            p.onAccess(rnd.nextInt(n));
        }
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            int v = p.victim();
            assertTrue(v >= 0 && seen.add(v), "seed " + seed + ": victim " + v + " named twice or -1");
            p.onRemove(v);
            assertEquals(n - i - 1, p.size());
        }
        assertEquals(-1, p.victim());
    }

    @Test
    void anEvictedBlockCanBeAdmittedAgain() {
        EvictionPolicy p = create(4);
        p.onAdmit(0, 0);
        p.onAdmit(1, 0);
        int v = p.victim();
        p.onRemove(v);
        assertFalse(p.contains(v));
        p.onAdmit(v, 0, 99L);
        assertTrue(p.contains(v));
        assertEquals(2, p.size());
    }

    @Test
    void randomOperationsKeepMembershipAndSizeConsistent() {
        long seed = System.nanoTime();
        try {
            SplittableRandom rnd = new SplittableRandom(seed);
            int n = 64;
            EvictionPolicy p = create(n);
            Set<Integer> model = new HashSet<>();
            for (int step = 0; step < 20_000; step++) {
                int id = rnd.nextInt(n);
                switch (rnd.nextInt(5)) {
                    case 0, 1 -> {
                        if (model.add(id)) {
                            p.onAdmit(id, rnd.nextInt(-2, 70), rnd.nextLong(8));
                        }
                    }
                    case 2 -> p.onAccess(id);
                    case 3 -> {
                        p.onRemove(id);
                        model.remove(id);
                    }
                    default -> {
                        int v = p.victim();
                        if (model.isEmpty()) {
                            assertEquals(-1, v);
                        } else {
                            assertTrue(model.contains(v), "victim " + v + " is not a candidate");
                            p.onRemove(v);
                            model.remove(v);
                        }
                    }
                }
                assertEquals(model.size(), p.size());
                assertEquals(model.contains(id), p.contains(id));
            }
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + ": " + e.getMessage(), e);
        }
    }

    @Test
    void matchesItsReferenceOnSeededRandomOperations() {
        for (long seed : new long[] {1L, 42L, 0xC0FFEEL, System.nanoTime()}) {
            for (int capacity : new int[] {1, 7, 50}) {
                Differential.run(seed, capacity, 4_000, create(capacity), reference(capacity));
            }
        }
    }

    @Test
    void steadyStateCallsAllocateNothingOnTheHeap() {
        int n = 1024;
        EvictionPolicy p = create(n);
        int[] ops = new int[1 << 16];
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < ops.length; i++) {
            ops[i] = rnd.nextInt(n);
        }
        long[] allocated = new long[4];
        for (int round = 0; round < allocated.length; round++) {
            long before = AllocationCounter.currentThreadAllocatedBytes();
            churn(p, ops);
            allocated[round] = AllocationCounter.currentThreadAllocatedBytes() - before;
        }
        // Round 0 warms up (class loading, interpreter, JIT). In a later round a call that
        // allocated anything would show at least 16 bytes per call; fewer bytes than calls in
        // all means no call allocates (a stray JVM-internal allocation on this thread, such as
        // a method handle compiling its call path, stays far below that).
        long last = allocated[allocated.length - 1];
        assertTrue(last < ops.length, "a steady-state round of " + ops.length + " calls allocated "
                + last + " bytes (rounds: " + java.util.Arrays.toString(allocated) + ")");
        // The instrument itself sees an allocation of known size.
        long before = AllocationCounter.currentThreadAllocatedBytes();
        long[] probe = new long[1024];
        long seen = AllocationCounter.currentThreadAllocatedBytes() - before;
        assertTrue(seen >= 8L * probe.length, "allocation counter saw " + seen + " bytes");
    }

    private static void churn(EvictionPolicy p, int[] ops) {
        for (int i = 0; i < ops.length; i++) {
            int id = ops[i];
            if (!p.contains(id)) {
                if (p.size() == p.capacity() / 2) {
                    p.onRemove(p.victim());
                }
                p.onAdmit(id, i & 7, id * 31L);
            } else if ((i & 3) == 0) {
                p.onRemove(id);
            } else {
                p.onAccess(id);
            }
        }
    }

    static int[] permutation(int n, SplittableRandom rnd) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        return a;
    }

    /**
     * Pops victims until empty.
     *
     * @return the victims in the order named
     */
    static int[] drain(EvictionPolicy p) {
        int[] out = new int[p.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = p.victim();
            p.onRemove(out[i]);
        }
        assertEquals(-1, p.victim());
        return out;
    }
}
