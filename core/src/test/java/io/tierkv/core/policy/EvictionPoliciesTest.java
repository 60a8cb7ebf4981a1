package io.tierkv.core.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class EvictionPoliciesTest {

    @Test
    void namesAreListedInAFixedOrder() {
        assertEquals(List.of("lru", "lfu", "fifo", "s3fifo", "sieve", "priority-lru"), EvictionPolicies.names());
    }

    @Test
    void everyNameCreatesAnEmptyPolicyOfThatName() {
        for (String name : EvictionPolicies.names()) {
            EvictionPolicy p = EvictionPolicies.create(name, 32);
            assertEquals(name, p.name());
            assertEquals(32, p.capacity());
            assertEquals(0, p.size());
        }
    }

    /** A cache keeps priorities only for a policy that says it reads them: the others must ignore them. */
    @Test
    void readsPriorityIsTrueExactlyForThePolicyWhoseVictimsDependOnPriorities() {
        for (String name : EvictionPolicies.names()) {
            List<Integer> low = victims(name, id -> 7 - id);
            List<Integer> high = victims(name, id -> id);
            EvictionPolicy p = EvictionPolicies.create(name, 8);
            assertEquals(!low.equals(high), p.readsPriority(), name + ": victims " + low + " and " + high);
        }
    }

    /** The order in which a policy over 8 ids, admitted in order with the given priorities, evicts them. */
    private static List<Integer> victims(String name, java.util.function.IntUnaryOperator priority) {
        EvictionPolicy p = EvictionPolicies.create(name, 8);
        for (int id = 0; id < 8; id++) {
            p.onAdmit(id, priority.applyAsInt(id), id);
        }
        List<Integer> order = new java.util.ArrayList<>();
        while (p.size() > 0) {
            int v = p.victim();
            order.add(v);
            p.onRemove(v);
        }
        return order;
    }

    @Test
    void anUnknownNameIsRejectedWithTheValidNames() {
        var e = assertThrows(IllegalArgumentException.class, () -> EvictionPolicies.create("LRU", 8));
        assertEquals("policy: 'LRU' is not registered (valid: lru, lfu, fifo, s3fifo, sieve, priority-lru)",
                e.getMessage());
        assertThrows(NullPointerException.class, () -> EvictionPolicies.create(null, 8));
    }

    @Test
    void aBadCapacityIsRejectedByEveryPolicy() {
        for (String name : EvictionPolicies.names()) {
            var e = assertThrows(IllegalArgumentException.class, () -> EvictionPolicies.create(name, 0));
            assertEquals("capacity: 0 (expected 1.." + AbstractPolicy.MAX_CAPACITY + " block ids)", e.getMessage());
        }
    }
}
