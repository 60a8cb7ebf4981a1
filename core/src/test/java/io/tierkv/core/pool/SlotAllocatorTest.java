package io.tierkv.core.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SlotAllocatorTest {

    @Test
    void handsOutEverySlotOnceThenRefuses() {
        SlotAllocator a = new SlotAllocator(5);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            seen.add(a.allocate());
        }
        assertEquals(Set.of(0, 1, 2, 3, 4), seen);
        assertEquals(-1, a.allocate());
        assertEquals(0, a.freeCount());
        assertEquals("", a.check());
    }

    @Test
    void doubleFreeThrowsAndChangesNothing() {
        SlotAllocator a = new SlotAllocator(3);
        int s = a.allocate();
        a.free(s);
        var e = assertThrows(IllegalStateException.class, () -> a.free(s));
        assertEquals("slot " + s + " freed twice (it is already free)", e.getMessage());
        assertEquals(3, a.freeCount());
        assertEquals("", a.check());
        assertThrows(IndexOutOfBoundsException.class, () -> a.free(3));
        assertThrows(IllegalArgumentException.class, () -> new SlotAllocator(0));
    }

    @Test
    void slabSlotsAreDistinctAndStable() {
        try (SlabMemory m = new SlabMemory(4, 4096)) {
            assertEquals(4096, m.slot(3).byteSize());
            assertEquals(m.slot(2), m.slot(2));
            assertEquals(4096, m.slot(1).address() - m.slot(0).address());
            m.slot(1).fill((byte) 7);
            assertEquals(0, m.slot(0).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4095));
        }
    }
}
