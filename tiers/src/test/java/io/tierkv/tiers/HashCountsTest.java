package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fold's primitive count table against a HashMap, through growth and backward-shift deletion. */
class HashCountsTest {

    private record Key(long hi, long lo) {
    }

    @Test
    void randomIncrementsAndDecrementsMatchAHashMap() {
        Random random = new Random(42);
        HashCounts counts = new HashCounts();
        Map<Key, Integer> model = new HashMap<>();
        Key[] keys = new Key[3_000];
        for (int i = 0; i < keys.length; i++) {
            // Half the keys share their high bits, so probe runs form and deletions must shift entries back.
            keys[i] = new Key(i % 2 == 0 ? 5 : random.nextLong(), i % 2 == 0 ? i : random.nextLong());
        }
        for (int step = 0; step < 400_000; step++) {
            Key k = keys[random.nextInt(step < 200_000 ? keys.length : 300)];
            if (random.nextInt(3) == 0) {
                int expected = model.merge(k, 1, Integer::sum);
                assertEquals(expected, counts.increment(k.hi(), k.lo()));
            } else {
                Integer n = model.get(k);
                int expected = n == null || n == 1 ? 0 : n - 1;
                if (n != null && n == 1) {
                    model.remove(k);
                } else if (n != null) {
                    model.put(k, n - 1);
                }
                assertEquals(expected, counts.decrement(k.hi(), k.lo()));
            }
            if (step % 10_000 == 0) {
                assertEquals(model.size(), counts.size());
                for (Key key : keys) {
                    assertEquals(model.getOrDefault(key, 0), counts.get(key.hi(), key.lo()), key.toString());
                }
            }
        }
        counts.clear();
        assertEquals(0, counts.size());
        assertEquals(0, counts.get(keys[0].hi(), keys[0].lo()));
    }
}
