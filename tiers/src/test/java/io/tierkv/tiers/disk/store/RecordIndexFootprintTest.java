package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The record index's heap per record (issue 19: at most 64 B per disk record, at every count)
 * and the pinned entries that keep pin counts and serials out of the per-record arrays.
 */
class RecordIndexFootprintTest {

    /** Issue 19's bound on heap per disk record. */
    private static final double MAX_BYTES_PER_RECORD = 64;

    @TempDir
    Path dir;

    @Test
    void aGrowingIndexHoldsAtMost64BytesPerRecordAtEveryCountFromTenThousandToOnePointThreeMillion() {
        RecordIndex index = new RecordIndex(16);
        index.finishLoading(); // running, as after an open: every size past 16 reached by gradual growth
        double worst = 0;
        int worstAt = 0;
        for (int n = 1; n <= 1_300_000; n++) {
            index.insert(n * 0x9E3779B97F4A7C15L, n, n & 7, (long) n << 6, 256);
            if (n >= 10_000) {
                double perRecord = (double) index.heapBytes() / n;
                if (perRecord > worst) {
                    worst = perRecord;
                    worstAt = n;
                }
            }
        }
        assertTrue(worst <= MAX_BYTES_PER_RECORD, "index heap " + worst + " B per record at " + worstAt
                + " records (expected <= " + MAX_BYTES_PER_RECORD + "); " + parts(index));
        assertEquals(index.heapBytes(), index.keyBytes() + index.locationBytes() + index.linkBytes()
                + index.pinnedBytes() + index.tableBytes());
        assertNull(index.check());
    }

    @Test
    void aLoadedIndexIsCutToItsRecordsAndThenGrowsByAQuarter() {
        int n = 300_000; // doubled to 524,288 slots while loading: more than a fifth unused
        RecordIndex index = new RecordIndex(1 << 16);
        for (int k = 0; k < n; k++) {
            index.insert(k * 0x9E3779B97F4A7C15L, k, 0, (long) k << 6, 256);
        }
        assertEquals(2 * RecordIndex.arrayBytes(524_288, Long.BYTES), index.keyBytes(), "loading doubles");
        index.finishLoading();
        assertEquals(2 * RecordIndex.arrayBytes(n, Long.BYTES), index.keyBytes(), "cut to the slots used");
        assertEquals(3 * RecordIndex.arrayBytes(n, Integer.BYTES), index.locationBytes());
        assertEquals(2 * RecordIndex.arrayBytes(n, Integer.BYTES), index.linkBytes());
        assertTrue(index.tableBytes() <= RecordIndex.arrayBytes(3 * n + 3, Integer.BYTES), parts(index));
        assertTrue((double) index.heapBytes() / n <= 48.1, index.heapBytes() / (double) n + " B per record");
        index.insert(-1, -1, 0, 0, 256);
        assertEquals(2 * RecordIndex.arrayBytes(n + n / 4, Long.BYTES), index.keyBytes(), "then a quarter more");
        for (int k = 0; k < n; k += 3) {
            assertEquals(k, index.hashLo[index.find(k * 0x9E3779B97F4A7C15L, k)]);
        }
        assertNull(index.check());
    }

    @Test
    @SuppressWarnings("GuardedBy") // reads the tier's parts from the test thread while nothing else uses the tier
    void aRecoveredTierOfSeventyThousandRecordsHoldsAtMost64BytesEachInItsStructures() {
        KvLayout layout = KvLayout.of(1, 1, 1, DType.F16, 16); // 64 B blocks: 256 B records
        int n = 70_000; // past the index's first size, so it has grown
        DiskOptions options = DiskOptions.at(dir).withPersistent(true).withCompression(Compression.NONE)
                .withSegmentBytes(8L << 20).withBudgetBytes(64L << 20).withLowSpaceWarnBytes(0);
        try (Arena arena = Arena.ofConfined(); DiskTier tier = DiskTier.open(options, layout)) {
            MemorySegment block = arena.allocate(layout.bytesPerBlock(), 64);
            MemorySegment identity = arena.allocate(BlockIdentity.bytes(16), 8);
            for (int k = 0; k < n; k++) {
                assertTrue(tier.put(1, k, identity, block), "put " + k);
            }
        }
        try (DiskTier tier = DiskTier.open(options, layout)) {
            assertEquals(n, tier.blockCount());
            Map<String, Long> bytes = tier.maintenance().heapBytesByStructure();
            long sum = bytes.values().stream().mapToLong(Long::longValue).sum();
            assertEquals(tier.index.heapBytes() + tier.segments.heapBytes(), sum, "no admission filter: " + bytes);
            assertTrue((double) sum / n <= MAX_BYTES_PER_RECORD, sum / (double) n + " B per record: " + bytes);
            tier.checkInvariants();
        }
    }

    @Test
    void pinnedRecordsKeepTheirCountsSerialsAndVisitingOrderUnderSeededChurn() {
        long seed = 0x19_2L;
        SplittableRandom r = new SplittableRandom(seed);
        RecordIndex index = new RecordIndex(4);
        LinkedHashMap<Long, Integer> lru = new LinkedHashMap<>(16, 0.75f, true); // unpinned keys, LRU first
        Map<Long, Integer> pins = new HashMap<>();
        Map<Long, Long> serials = new HashMap<>();
        Set<Long> serialsGiven = new HashSet<>();
        for (int step = 0; step < 60_000; step++) {
            long k = r.nextInt(3000);
            long hi = k * 0x9E3779B97F4A7C15L;
            int slot = index.find(hi, k);
            boolean present = lru.containsKey(k) || pins.containsKey(k);
            assertEquals(present, slot != RecordIndex.NONE, "seed " + seed + " step " + step);
            switch (r.nextInt(5)) {
                case 0 -> {
                    if (!present) {
                        lru.put(k, index.insert(hi, k, 2, k * 64, 128));
                    }
                }
                case 1 -> {
                    if (present) {
                        index.remove(slot);
                        lru.remove(k);
                        pins.remove(k);
                        serials.remove(k);
                    }
                }
                case 2 -> {
                    if (present) {
                        index.touch(slot);
                        lru.get(k);
                    }
                }
                case 3 -> {
                    if (present) {
                        boolean first = index.pin(slot);
                        assertEquals(!pins.containsKey(k), first, "seed " + seed + " step " + step);
                        if (first) {
                            lru.remove(k);
                            long serial = index.serial(slot);
                            assertTrue(serialsGiven.add(serial), "serial " + serial + " given twice, seed " + seed);
                            serials.put(k, serial);
                        }
                        pins.merge(k, 1, Integer::sum);
                    }
                }
                default -> {
                    if (pins.containsKey(k)) {
                        boolean last = index.unpin(slot);
                        assertEquals(pins.get(k) == 1, last, "seed " + seed + " step " + step);
                        if (last) {
                            pins.remove(k);
                            serials.remove(k);
                            lru.put(k, slot);
                        } else {
                            pins.merge(k, -1, Integer::sum);
                        }
                    } else if (present) {
                        assertThrows(IllegalStateException.class, () -> index.unpin(slot));
                    }
                }
            }
            if (present && index.find(hi, k) != RecordIndex.NONE) {
                assertEquals(pins.getOrDefault(k, 0), index.pins(slot), "seed " + seed + " step " + step);
                assertEquals(serials.getOrDefault(k, DiskTier.NO_PIN), index.serial(slot), "seed " + seed);
                assertEquals(k * 64, index.offset[slot]);
            }
            if (step % 5000 == 0) {
                assertNull(index.check(), "seed " + seed + " step " + step);
            }
        }
        assertNull(index.check(), "seed " + seed);
        assertEquals(lru.size() + pins.size(), index.size());
        assertEquals(pins.size(), index.pinnedCount());
        int slot = index.first();
        for (long k : lru.keySet()) {
            assertEquals(k, index.hashLo[slot], "LRU order first, seed " + seed);
            slot = index.after(slot);
        }
        Set<Long> pinnedVisited = new HashSet<>();
        for (; slot != RecordIndex.NONE; slot = index.after(slot)) {
            assertTrue(pinnedVisited.add(index.hashLo[slot]));
        }
        assertEquals(pins.keySet(), pinnedVisited, "then every pinned record once, seed " + seed);
        assertFalse(pins.isEmpty(), "the churn left records pinned, seed " + seed);
    }

    private static String parts(RecordIndex index) {
        return "keys " + index.keyBytes() + " B, locations " + index.locationBytes() + " B, links "
                + index.linkBytes() + " B, pinned " + index.pinnedBytes() + " B, table " + index.tableBytes() + " B";
    }
}
