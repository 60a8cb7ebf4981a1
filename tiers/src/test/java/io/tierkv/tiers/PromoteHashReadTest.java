package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.reflect.Field;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A promotion from disk loads the key the cache holds for the block, not one the host tier reads
 * again after the cache planned it and the lock was let go for the copy: replays, step by step, an interleaving in
 * which the block's disk copy is cleared between the two (a match's pin finds the
 * record evicted) and the key is written again by another id of the same identity. When the host
 * tier kept a disk-only copy of the key, which went with ON_DISK, and read it in a second lock
 * section, the promotion loaded key (0, 0) and lost the block (a reviewer's replay of this, at
 * 6749629: LOST where PROMOTED was due). The host tier now keeps no copy of the key at all (it
 * reads the cache's, {@code BlockOwner.hashHi}); this replay still guards the promotion's key.
 */
class PromoteHashReadTest {

    @TempDir
    Path dir;

    @Test
    void aDiskPromotionLoadsTheKeyTheCacheHoldsEvenAfterItsDiskCopyWasCleared() throws Exception {
        int bb = Managers.LAYOUT.bytesPerBlock();
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), host -> host);
                Arena arena = Arena.ofConfined()) {
            HostTier host = stack.host;
            DiskTier disk = stack.disk;
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            int id = b.id();
            // 1. the promotion's plan, under the lock: a disk-only copy (no host slot)
            host.blocks.lock.lock();
            try {
                assertEquals(LowerTier.SOURCE_NONE, host.preparePromote(id), "no host copy");
                assertTrue(host.blocks.is(id, HostBlocks.ON_DISK), "bound to its disk record");
            } finally {
                host.blocks.lock.unlock();
            }
            // 2. meanwhile: the record is evicted, a match's pin finds it gone (ON_DISK cleared, as the cache does)
            assertEquals(1, disk.maintenance().evict(1));
            host.blocks.lock.lock();
            try {
                host.blocks.unmark(id, HostBlocks.ON_DISK);
            } finally {
                host.blocks.lock.unlock();
            }
            // 3. another id of the same identity writes the key again
            assertTrue(disk.put(b.hashHi(), b.hashLo(), b.identity(), blockImage(arena.allocate(bb), Managers.LAYOUT, 7, 0)));
            // 4. the promotion goes on with the key the cache gave it
            Field f = HostTier.class.getDeclaredField("diskLoads");
            f.setAccessible(true);
            DiskLoads loads = (DiskLoads) f.get(host);
            long missesBefore = host.counters.diskMisses.sum();
            int result = loads.promote(id, b.hashHi(), b.hashLo(), b.identity(), HostDiskStack.BLOCKS - 1, System.nanoTime());
            assertEquals(LowerTier.PROMOTED, result, "the record under its key holds its identity");
            assertEquals(missesBefore, host.counters.diskMisses.sum(), "no miss counted");
        }
    }
}
