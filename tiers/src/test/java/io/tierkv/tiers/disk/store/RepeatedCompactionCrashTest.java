package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.TreeSet;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two compactions in place killed in a row (LZ4 records of mixed sizes, several segments), each
 * followed by two recoveries, then a whole compaction and a restart (a review's stress of the
 * interrupted-compaction recovery): records left unmoved by the first crash carry the nonce two
 * steps before the segment's after the second. No live record lost, no removed one back, no
 * wrong byte, and two recoveries of the same files agree.
 */
class RepeatedCompactionCrashTest {

    private static final int N = 3_000;

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(ints = {0, 2, 5, 12})
    void twoKilledCompactionsInARow(int delayMillis) throws Exception {
        Path dir = tmp.resolve("kv");
        CompactionCrashChild.fill(dir, true, N, tmp.resolve("fill.out"));
        TreeSet<Long> expected = new TreeSet<>();
        for (long k = 0; k < N; k += 3) {
            expected.add(k);
        }
        for (int round = 1; round <= 2; round++) {
            String what = "round " + round + " kill " + delayMillis * round + " ms (" + CompactionCrashChild
                    .killedCompaction(dir, true, delayMillis * round, tmp.resolve("compact" + round + ".out")) + ")";
            TreeSet<Long> first = null;
            for (int recovery = 1; recovery <= 2; recovery++) {
                try (DiskTier tier = DiskTier.open(CompactionCrashChild.options(dir, true), DiskTestSupport.LAYOUT)) {
                    TreeSet<Long> got = present(tier);
                    String w = what + ", recovery " + recovery + ": " + tier.stats();
                    for (long k : got) {
                        assertTrue(k % 3 == 0, "removed key " + k + " is back, " + w);
                    }
                    TreeSet<Long> lost = new TreeSet<>(expected);
                    lost.removeAll(got);
                    assertTrue(lost.size() <= 1, "lost " + lost + ", " + w);
                    if (first == null) {
                        first = got;
                    } else {
                        assertEquals(first, got, "two recoveries, " + w);
                    }
                }
            }
            expected = first;
        }
        try (DiskTier tier = DiskTier.open(CompactionCrashChild.options(dir, true), DiskTestSupport.LAYOUT)) {
            tier.maintenance().compact();
            assertEquals(expected, present(tier), "after a full compaction: " + tier.stats());
        }
        try (DiskTier tier = DiskTier.open(CompactionCrashChild.options(dir, true), DiskTestSupport.LAYOUT)) {
            assertEquals(expected, present(tier), "after a full compaction and restart: " + tier.stats());
        }
    }

    private static TreeSet<Long> present(DiskTier tier) {
        TreeSet<Long> s = new TreeSet<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = arena.allocate(DiskTestSupport.LAYOUT.bytesPerBlock(), 64);
            for (long k = 0; k < N; k++) {
                if (tier.get(DiskTestSupport.hi(k), DiskTestSupport.lo(k), DiskTestSupport.identity(arena, k), b)) {
                    assertEquals(-1, CompactionCrashChild.block(arena, k, true).mismatch(b), "bytes of key " + k);
                    s.add(k);
                }
            }
        }
        return s;
    }
}
