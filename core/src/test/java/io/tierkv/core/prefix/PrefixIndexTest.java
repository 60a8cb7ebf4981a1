package io.tierkv.core.prefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PrefixIndexTest {

    @Test
    void matchesAHashMapUnderRandomPutsAndRemoves() {
        int n = 512;
        long seed = 20261129;
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
