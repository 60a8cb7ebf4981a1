package io.tierkv.tiers.disk;

import static io.tierkv.tiers.disk.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.DiskTestSupport.options;
import static io.tierkv.tiers.disk.DiskTestSupport.ownFileBytes;
import static io.tierkv.tiers.disk.DiskTestSupport.put;
import static io.tierkv.tiers.disk.DiskTestSupport.segmentBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class DiskTierTest {

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final List<DiskTier> open = new ArrayList<>();

    private DiskTier open(DiskOptions o) {
        DiskTier t = DiskTier.open(o, LAYOUT);
        open.add(t);
        return t;
    }

    @AfterEach
    void checkAndClose() {
        for (DiskTier t : open) {
            try {
                if (!t.toString().contains("closed")) {
                    t.checkInvariants();
                }
            } finally {
                t.close();
            }
        }
        arena.close();
    }

    enum Mode { RAW, LZ4, LZ4_SHUFFLE }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void blocksComeBackByteExactInEveryCodec(Mode mode) {
        DiskOptions o = options(dir, 4, 1 << 20).withCompression(mode == Mode.RAW ? Compression.NONE : Compression.LZ4)
                .withShuffle(mode == Mode.LZ4_SHUFFLE);
        DiskTier tier = open(o);
        for (int k = 0; k < 20; k++) {
            assertTrue(put(tier, arena, k));
        }
        assertEquals(20, tier.blockCount());
        for (int k = 0; k < 20; k++) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
        assertFalse(getAndVerify(tier, arena, 999));
        DiskStats s = tier.stats();
        assertEquals(20, s.puts());
        assertEquals(21, s.gets());
        assertEquals(20, s.hits());
        assertEquals(1, s.misses());
        assertTrue(Double.isFinite(s.compressionRatio()));
        System.out.println(mode + ": " + s);
    }

    @Test
    void usedBytesEqualsTheFilesOnDiskAndStaysWithinBudget() {
        long budget = 3 * segmentBytes(2) + 4096;
        DiskTier tier = open(options(dir, 2, budget).withCompression(Compression.NONE));
        List<Long> evicted = new ArrayList<>();
        tier.setEvictionListener((h, l) -> evicted.add(l));
        for (int k = 0; k < 30; k++) {
            assertTrue(put(tier, arena, k));
            tier.checkInvariants();
            assertEquals(ownFileBytes(dir), tier.usedBytes());
            assertTrue(tier.usedBytes() <= budget);
        }
        assertEquals(30 - tier.blockCount(), evicted.size());
        for (long k : evicted) {
            assertFalse(tier.contains(hi(k), lo(k)));
        }
        // what remains is the most recent and reads back
        for (int k = 29; k > 29 - tier.blockCount(); k--) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
    }

    @Test
    void secondOpenOfTheSameDirectoryIsRefused() {
        open(options(dir, 2, 1 << 20));
        var e = assertThrows(IllegalStateException.class, () -> DiskTier.open(options(dir, 2, 1 << 20), LAYOUT));
        assertTrue(e.getMessage().contains("held by another manager"), e.getMessage());
    }

    @Test
    void nonPersistentCloseDeletesItsFilesAndLeavesForeignOnes() throws Exception {
        Path foreign = Files.writeString(dir.resolve("notes.txt"), "mine");
        DiskTier tier = open(options(dir, 2, 1 << 20));
        for (int k = 0; k < 5; k++) {
            put(tier, arena, k);
        }
        tier.close();
        assertEquals(0, ownFileBytes(dir));
        assertTrue(Files.exists(foreign));
        try (var ds = Files.list(dir)) {
            assertEquals(List.of(foreign), ds.toList());
        }
    }
}
