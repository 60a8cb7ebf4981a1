package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A promotion of a block held on disk alone is timed from when it began, its disk read included,
 * in the promotions' sampled latency ({@code TierStats.promotions}: host or disk to device), as
 * before the promotion from disk became the cache's move. The first version of that move timed
 * only the staging buffer's copy to the device (found by its review: p50 52 us where the disk read
 * alone took 300 ms). The disk read is made slow by holding the disk tier's lock.
 */
class DiskPromotionLatencyTest {

    private static final int B = 16;
    private static final long SLOW_NANOS = 300_000_000L;

    @TempDir
    Path dir;

    @Test
    void aDiskPromotionsSampledLatencyIncludesItsDiskRead() throws Exception {
        KvLayout layout = Managers.LAYOUT;
        long bb = layout.bytesPerBlock();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment image = blockImage(arena.allocate(bb), layout, 77, 0);
            KvBlockManager kv = KvBlockManager.builder(layout).device(new EmulatedDevice(4 * bb + (1 << 20)), 4 * bb)
                    .host(2 * bb).recentDeviceBlocks(0).movers(0)
                    .disk(DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                            .withCompression(Compression.NONE))
                    .build();
            HostTier host = Managers.hostOf(kv);
            Field lf = DiskTier.class.getDeclaredField("lock");
            lf.setAccessible(true);
            ReentrantLock diskLock = (ReentrantLock) lf.get(host.disk);

            Sequence sx = kv.openSequence(SequenceOptions.defaults());
            sx.appendBlock(tokens(1000, B), 0, image);
            int x = sx.blockId(0);
            assertTrue(kv.demoteBlock(x));
            assertEquals(1, kv.evictHost(1));
            kv.runMoverCycle();
            assertEquals(0, kv.stats().promotions().blocks(), "the first promotion is the sampled one");

            Thread p;
            diskLock.lock(); // the disk read is slow
            try {
                p = Thread.ofPlatform().daemon().start(() -> kv.acquireLease(x));
                long end = System.nanoTime() + 5_000_000_000L;
                while (!diskLock.hasQueuedThread(p) && System.nanoTime() < end) {
                    Thread.sleep(1);
                }
                assertTrue(diskLock.hasQueuedThread(p), "the promotion reads the disk");
                Thread.sleep(SLOW_NANOS / 1_000_000);
            } finally {
                diskLock.unlock();
            }
            p.join(5_000);
            TierStats st = kv.stats();
            assertEquals(1, st.promotions().blocks());
            assertTrue(st.diskLoads().p50Nanos() >= SLOW_NANOS, "diskLoads times the read: " + st.diskLoads());
            assertTrue(st.promotions().p50Nanos() >= SLOW_NANOS,
                    "the disk-to-device promotion's latency includes its disk read: " + st.promotions());
            kv.releaseLease(x);
            sx.close();
            kv.close();
        }
    }
}
