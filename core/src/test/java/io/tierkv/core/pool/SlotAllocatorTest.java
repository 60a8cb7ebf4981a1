package io.tierkv.core.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
    void handsOutTheSlotsFreedLastFirstThenTheLowestFree() {
        SlotAllocator a = new SlotAllocator(200);
        for (int i = 0; i < 200; i++) {
            assertEquals(i, a.allocate(), "lowest first while nothing was freed");
        }
        a.free(130);
        a.free(7);
        a.free(64);
        assertEquals(64, a.allocate(), "freed last, handed out first (still warm)");
        assertEquals(7, a.allocate());
        assertEquals(130, a.allocate());
        assertEquals(-1, a.allocate());
        for (int s = 199; s >= 180; s--) { // 20 frees: the first 4 fall out of the 16 remembered
            a.free(s);
        }
        for (int s = 180; s < 196; s++) {
            assertEquals(s, a.allocate(), "the 16 freed last, newest first");
        }
        for (int s = 196; s < 200; s++) {
            assertEquals(s, a.allocate(), "then the lowest free");
        }
        assertEquals("", a.check());
    }

    /** One, two, three and four levels of bits (64, 64^2 and 64^3 slots are the boundaries). */
    @ParameterizedTest
    @ValueSource(ints = {1, 63, 64, 65, 4096, 4097, 262_144, 262_145, 300_001})
    void agreesWithASortedSetOfFreeSlotsUnderRandomUse(int capacity) {
        SlotAllocator a = new SlotAllocator(capacity);
        TreeSet<Integer> free = new TreeSet<>();
        for (int i = 0; i < capacity; i++) {
            free.add(i);
        }
        TreeSet<Integer> used = new TreeSet<>();
        java.util.ArrayDeque<Integer> recent = new java.util.ArrayDeque<>(); // the model: newest last
        Random r = new Random(capacity);
        for (int op = 0; op < 20_000; op++) {
            boolean take = used.isEmpty() || (!free.isEmpty() && r.nextInt(3) != 0);
            if (take) {
                Integer expected = null;
                while (expected == null && !recent.isEmpty()) {
                    Integer last = recent.pollLast();
                    expected = free.contains(last) ? last : null;
                }
                expected = expected == null ? free.first() : expected;
                int s = a.allocate();
                assertEquals(expected, s, "op " + op);
                free.remove(s);
                used.add(s);
            } else {
                Integer s = used.ceiling(r.nextInt(capacity));
                s = s == null ? used.first() : s;
                a.free(s);
                used.remove(s);
                free.add(s);
                recent.addLast(s);
                if (recent.size() > SlotAllocator.RECENT) {
                    recent.pollFirst();
                }
            }
            assertEquals(free.size(), a.freeCount());
        }
        for (int s = 0; s < capacity; s += Math.max(1, capacity / 1000)) {
            assertEquals(used.contains(s), a.isAllocated(s), "slot " + s);
        }
        assertEquals("", a.check());
        while (a.allocate() >= 0) {
            // drain: every level empties
        }
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
