package io.tierkv.core.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class IdLongsTest {

    @Test
    void matchesAHashMapThroughGrowthAndShrinking() {
        long seed = 20261203;
        Random rnd = new Random(seed);
        IdLongs table = new IdLongs(2);
        Map<Integer, long[]> ref = new HashMap<>();
        for (int step = 0; step < 400_000; step++) {
            // phases of adding many, then removing many, so the table grows and shrinks
            boolean adding = (step / 50_000) % 2 == 0;
            int id = rnd.nextInt(1 << 20);
            if (adding || ref.isEmpty() || rnd.nextInt(4) == 0) {
                long hi = rnd.nextLong();
                table.set(id, 0, hi);
                table.set(id, 1, ~hi);
                ref.put(id, new long[] {hi, ~hi});
            } else {
                int victim = ref.keySet().iterator().next();
                assertTrue(table.remove(victim), "seed " + seed + " step " + step);
                ref.remove(victim);
                assertEquals(false, table.remove(victim));
            }
            if (step % 5_000 == 0) {
                assertEquals(ref.size(), table.size(), "seed " + seed + " step " + step);
                for (var e : ref.entrySet()) {
                    assertEquals(e.getValue()[0], table.get(e.getKey(), 0, 7L));
                    assertEquals(e.getValue()[1], table.get(e.getKey(), 1, 7L));
                }
                TreeSet<Integer> ids = new TreeSet<>();
                table.forEachId(ids::add);
                assertEquals(new TreeSet<>(ref.keySet()), ids);
            }
        }
        assertEquals(7L, table.get(-5 + (1 << 21), 0, 7L), "an id never held reads as absent");
    }

    @Test
    void aRemovedIdsWordsDoNotComeBackAndTheTableShrinksToItsIds() {
        IdLongs table = new IdLongs(1);
        long empty = table.heapBytes();
        for (int id = 0; id < 100_000; id++) {
            table.set(id, 0, id + 1L);
        }
        assertTrue(table.heapBytes() >= 100_000 * 12L, "holds 100,000 ids: " + table.heapBytes());
        for (int id = 0; id < 100_000; id++) {
            assertTrue(table.remove(id));
        }
        assertEquals(0, table.size());
        assertEquals(empty, table.heapBytes(), "back to its first size");
        IdLongs two = new IdLongs(2);
        two.set(5, 0, 9);
        two.set(5, 1, 8);
        two.remove(5);
        two.set(5, 0, 1); // re-added with one word set: the other starts at 0, not the old 8
        assertEquals(1, two.get(5, 0, -1));
        assertEquals(0, two.get(5, 1, -1));
    }

    @Test
    void strideIsChecked() {
        var e = assertThrows(IllegalArgumentException.class, () -> new IdLongs(0));
        assertEquals("stride: 0 (expected >= 1)", e.getMessage());
    }
}
