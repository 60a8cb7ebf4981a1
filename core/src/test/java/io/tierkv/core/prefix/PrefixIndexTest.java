package io.tierkv.core.prefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PrefixIndexTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 512, 1000})
    void matchesAHashMapUnderRandomPutsAndRemoves(int n) {
        long seed = 20261129 + n;
        Random rnd = new Random(seed);
        long[] hi = new long[n];
        long[] lo = new long[n];
        PrefixIndex index = new PrefixIndex(hi, lo);
        Map<String, Integer> ref = new HashMap<>();
        boolean[] in = new boolean[n];
        for (int step = 0; step < 200_000; step++) {
            int id = rnd.nextInt(n);
            if (in[id]) {
                index.remove(id);
                ref.remove(hi[id] + ":" + lo[id]);
                in[id] = false;
            } else {
                hi[id] = rnd.nextInt(64); // many collisions in hi, clustered probes
                lo[id] = rnd.nextLong();
                String key = hi[id] + ":" + lo[id];
                boolean put = index.put(id);
                assertEquals(!ref.containsKey(key), put, "seed " + seed + " step " + step);
                if (put) {
                    ref.put(key, id);
                    in[id] = true;
                }
            }
            if (step % 1000 == 0) {
                assertEquals(ref.size(), index.size(), "seed " + seed);
                for (var e : ref.entrySet()) {
                    int id2 = e.getValue();
                    assertEquals(id2, index.get(hi[id2], lo[id2]), "seed " + seed + " step " + step);
                }
            }
        }
    }

    @Test
    void tableHoldsFiveThirdsOfTheIdsWithNoPowerOfTwoRounding() {
        assertEquals(2, PrefixIndex.tableLength(0));
        assertEquals(2, PrefixIndex.tableLength(1));
        assertEquals(12, PrefixIndex.tableLength(7));
        assertEquals(1_666_667, PrefixIndex.tableLength(1_000_000));
        assertEquals(16_666_667, PrefixIndex.tableLength(10_000_000)); // 2^25 = 33,554,432 before
        assertEquals(Integer.MAX_VALUE - 8, PrefixIndex.tableLength(Integer.MAX_VALUE - 16)); // the largest array, still > ids
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 7, 100, 999})
    void everyIdIndexedAtOnceIsFoundAndRemovedAcrossTheTablesEnd(int n) {
        Random rnd = new Random(n);
        long[] hi = new long[n];
        long[] lo = new long[n];
        PrefixIndex index = new PrefixIndex(hi, lo);
        for (int id = 0; id < n; id++) {
            hi[id] = rnd.nextInt(3); // long clusters, which wrap at the end of a table of ceil(5n/3)
            lo[id] = rnd.nextLong();
            assertEquals(true, index.put(id));
        }
        assertEquals(n, index.size());
        for (int id = 0; id < n; id++) {
            assertEquals(id, index.get(hi[id], lo[id]));
        }
        for (int id = n - 1; id >= 0; id -= 2) {
            assertEquals(true, index.remove(id));
            assertEquals(-1, index.get(hi[id], lo[id]));
        }
        for (int id = 0; id < n; id++) {
            assertEquals((n - 1 - id) % 2 == 0 ? -1 : id, index.get(hi[id], lo[id]), "id " + id);
        }
    }

    @Test
    void chainedHashesDependOnSaltParentTokensAndKeys() {
        BlockHasher h = new BlockHasher(HashAlgorithm.MURMUR3_128);
        MemorySegment t = MemorySegment.ofArray(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
        h.hashBlock(1, 2, 0, 0, new long[0], t, 0, 16);
        long a = h.hi();
        long b = h.lo();
        h.hashBlock(1, 2, 0, 0, new long[0], t, 0, 16);
        assertEquals(a, h.hi());
        assertEquals(b, h.lo());
        h.hashBlock(1, 3, 0, 0, new long[0], t, 0, 16);
        assertNotEquals(b, h.lo(), "salt");
        h.hashBlock(1, 2, 0, 1, new long[0], t, 0, 16);
        assertNotEquals(b, h.lo(), "parent");
        h.hashBlock(1, 2, 0, 0, new long[] {9}, t, 0, 16);
        assertNotEquals(b, h.lo(), "extra keys");
        h.hashBlock(1, 2, 0, 0, new long[0], t, 1, 15);
        assertNotEquals(b, h.lo(), "tokens");
        BlockHasher sha = new BlockHasher(HashAlgorithm.SHA256_128);
        sha.hashBlock(1, 2, 0, 0, new long[0], t, 0, 16);
        assertFalse(sha.hi() == a && sha.lo() == b);
        long[] s1 = new long[2];
        long[] s2 = new long[2];
        h.hashSalt("tenant-a", s1);
        h.hashSalt("tenant-b", s2);
        assertNotEquals(s1[1], s2[1]);
    }
}
