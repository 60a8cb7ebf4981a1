package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A promotion from disk loads the key the cache holds for the block, read under the lock as it
 * planned the move, not one read again after the lock was let go for the copy: replays an
 * interleaving in which, as the promotion reads the record, the block's record goes (removed: its
 * pin breaks) and the key is written again by another id of the same identity. When the host tier
 * kept a disk-only copy of the key, which went with the block's disk copy, and read it in a second
 * lock section, the promotion loaded key (0, 0) and lost the block (a reviewer's replay of this, at
 * 6749629: LOST where PROMOTED was due). The promotion from disk is now the cache's move ({@code
 * Promote}, {@code DiskRecords.stage}); this replay still guards its key.
 */
class PromoteHashReadTest {

    @TempDir
    Path dir;

    @Test
    void aDiskPromotionLoadsTheKeyTheCacheHoldsEvenAfterItsDiskCopyWasCleared() {
        int bb = Managers.LAYOUT.bytesPerBlock();
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new);
                Arena arena = Arena.ofConfined()) {
            HostTier host = stack.host;
            DiskTier disk = stack.disk;
            HookedLower lower = (HookedLower) stack.lower;
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            int id = b.id();
            assertEquals(LowerTier.RESIDENT_DISK, stack.cache.tierControl().residence(id), "a disk-only copy");
            MemorySegment image = blockImage(arena.allocate(bb), Managers.LAYOUT, 7, 0);
            lower.beforeStage = () -> { // the promotion planned from disk, the lock released
                assertTrue(disk.remove(b.hashHi(), b.hashLo()), "the record goes (the lease's pin on it breaks)");
                // another id of the same identity writes the key again
                assertTrue(disk.put(b.hashHi(), b.hashLo(), b.identity(), image));
            };
            long missesBefore = host.counters.diskMisses.sum();
            MemorySegment leased = stack.cache.acquireLease(id); // promoted from disk
            try {
                assertNull(lower.beforeStage, "the hook ran");
                assertEquals(-1, leased.mismatch(image), "the record under its key holds its bytes");
            } finally {
                stack.cache.releaseLease(id);
            }
            assertEquals(missesBefore, host.counters.diskMisses.sum(), "no miss counted");
            assertEquals(List.of(), stack.cache.checkInvariants());
        }
    }
}
