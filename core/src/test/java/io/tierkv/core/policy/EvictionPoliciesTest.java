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
