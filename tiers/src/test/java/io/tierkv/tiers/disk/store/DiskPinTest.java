package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.block;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.store.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.store.DiskTestSupport.options;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static io.tierkv.tiers.disk.store.DiskTestSupport.segmentBytes;
import static io.tierkv.tiers.disk.store.DiskTestSupport.identity;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskStats;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pinned records: never evicted, a full pinned tier refuses puts, unpinning makes them evictable. */
class DiskPinTest {

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final List<Long> evicted = new ArrayList<>();
    /** The pin each key's last {@link #putPinned} took. */
    private final java.util.Map<Long, Long> pins = new java.util.HashMap<>();
    private DiskTier tier;

    /** Three segments of two raw records each, and nothing more. */
    @BeforeEach
    void open() {
        tier = DiskTier.open(options(dir, 2, 3 * segmentBytes(2) + 4096).withCompression(Compression.NONE),
                DiskTestSupport.LAYOUT);
        tier.maintenance().setEvictionListener((h, l) -> evicted.add(l));
    }

    @AfterEach
    void checkAndClose() {
        try {
            tier.checkInvariants();
        } finally {
            tier.close();
            arena.close();
        }
    }

    private boolean putPinned(long k) {
        long pin = tier.putPinned(hi(k), lo(k), identity(arena, k), block(arena, k));
        pins.put(k, pin);
        return pin != DiskTier.NO_PIN;
    }

    private boolean unpin(long k) {
        return tier.pinning().unpin(hi(k), lo(k), pins.get(k));
    }

    @Test
    void aTierFullOfPinnedRecordsRefusesPutsAndEvictsNothing() {
        for (int k = 0; k < 6; k++) {
            assertTrue(putPinned(k));
        }
        CapacityExhaustedException e = assertThrows(CapacityExhaustedException.class, () -> put(tier, arena, 6));
        assertEquals("DISK", e.tier());
        assertTrue(e.getMessage().contains("6 pinned records"), e.getMessage());
        DiskStats s = tier.stats();
        assertEquals(1, s.pinRefusals());
        assertEquals(0, s.evictions());
        assertEquals(6, s.blockCount());
        assertEquals(6, s.pinnedBlocks());
        assertEquals(List.of(), evicted);
        assertFalse(tier.contains(hi(6), lo(6)));
        for (int k = 0; k < 6; k++) {
            assertTrue(getAndVerify(tier, arena, k), "pinned key " + k);
        }
    }

    @Test
    void unpinnedRecordsBecomeEvictableAgainAsMostRecentlyUsed() {
        for (int k = 0; k < 6; k++) {
            assertTrue(putPinned(k));
        }
        assertTrue(unpin(1));
        assertTrue(unpin(0));
        assertTrue(put(tier, arena, 6), "room made by evicting the two unpinned records of segment 0");
        assertEquals(List.of(1L, 0L), evicted, "unpin order is LRU order");
        assertEquals(2, tier.stats().evictions());
        assertEquals(4, tier.stats().pinnedBlocks());
        for (int k = 2; k <= 6; k++) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
    }

    @Test
    void pinsCountAndAnExtraUnpinThrows() {
        assertTrue(put(tier, arena, 3));
        assertEquals(0, tier.pinning().pins(hi(3), lo(3)));
        long pin = tier.pinning().pin(hi(3), lo(3));
        assertTrue(pin > 0, "a pin names the record's serial: " + pin);
        assertTrue(putPinned(3), "an existing record takes one more pin");
        assertEquals(pin, pins.get(3L), "the same record, so the same pin");
        assertEquals(2, tier.pinning().pins(hi(3), lo(3)));
        assertEquals(0, tier.maintenance().evict(5), "a pinned record is no eviction victim");
        assertTrue(tier.pinning().unpin(hi(3), lo(3), pin));
        assertEquals(1, tier.pinning().pins(hi(3), lo(3)));
        assertTrue(tier.pinning().unpin(hi(3), lo(3), pin));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> tier.pinning().unpin(hi(3), lo(3), pin));
        assertTrue(e.getMessage().contains("pin count 0"), e.getMessage());
        assertEquals(-1, tier.pinning().pins(hi(9), lo(9)));
        assertEquals(DiskTier.NO_PIN, tier.pinning().pin(hi(9), lo(9)));
        e = assertThrows(IllegalStateException.class, () -> tier.pinning().unpin(hi(9), lo(9), pin));
        assertTrue(e.getMessage().contains("holds nothing"), e.getMessage());
        assertEquals(1, tier.maintenance().evict(5));
        assertEquals(List.of(3L), evicted);
    }

    @Test
    void evictTakesOnlyUnpinnedRecords() {
        for (int k = 0; k < 4; k++) {
            assertTrue(k % 2 == 0 ? putPinned(k) : put(tier, arena, k));
        }
        assertEquals(2, tier.maintenance().evict(10));
        assertEquals(List.of(1L, 3L), evicted);
        assertEquals(2, tier.blockCount());
        assertTrue(getAndVerify(tier, arena, 0));
        assertTrue(getAndVerify(tier, arena, 2));
    }

    @Test
    void aSegmentLeftWithOnlyPinnedRecordsIsCompactedForRoom() {
        for (int k = 0; k < 6; k++) { // segment s holds keys 2s (pinned) and 2s + 1
            assertTrue(k % 2 == 0 ? putPinned(k) : put(tier, arena, k));
        }
        assertTrue(put(tier, arena, 6));
        assertEquals(List.of(1L), evicted, "one eviction, then segment 0 compacted around its pinned record");
        assertEquals(1, tier.stats().compactions());
        for (int k : new int[] {0, 2, 3, 4, 5, 6}) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
    }

    @Test
    void aRemovedPinnedRecordLeavesABrokenPinThatItsReleaseTakesWithoutTouchingTheNewRecord() {
        assertTrue(putPinned(4));
        long old = pins.get(4L);
        assertTrue(tier.remove(hi(4), lo(4)));
        assertEquals(0, tier.stats().pinnedBlocks());
        assertTrue(tier.pinning().pinBroken(old));
        assertEquals(1, tier.pinning().brokenPins());
        assertTrue(putPinned(4), "the key written anew, pinned by another holder");
        long fresh = pins.get(4L);
        assertTrue(fresh != old, "a new record, a new serial: " + old + " then " + fresh);
        assertFalse(tier.pinning().pinBroken(fresh));
        assertEquals(1, tier.pinning().pins(hi(4), lo(4)));
        assertFalse(tier.pinning().unpin(hi(4), lo(4), old), "the old pin releases its broken pin only");
        assertEquals(1, tier.pinning().pins(hi(4), lo(4)), "the new record keeps its own pin");
        assertEquals(0, tier.pinning().brokenPins());
        assertFalse(tier.pinning().pinBroken(old));
        assertThrows(IllegalStateException.class, () -> tier.pinning().unpin(hi(4), lo(4), old), "released twice");
        assertTrue(tier.pinning().unpin(hi(4), lo(4), fresh));
        assertEquals(0, tier.pinning().pins(hi(4), lo(4)));
    }
}
